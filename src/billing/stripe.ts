import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ACCOUNT_ID_PATTERN } from './accounts.js';
import { KEY_ID_PATTERN } from './keys.js';
import { MAX_BALANCE } from './ledger.js';

/** How far a Stripe-Signature timestamp may be from now: Stripe's own libraries' default. */
export const STRIPE_TOLERANCE_SECONDS = 300;

export type SignatureCheck = { valid: true } | { valid: false; reason: string };

/**
 * Checks a Stripe-Signature header (`t=<unix time>,v1=<hex>,...`) as Stripe documents it: HMAC-SHA256
 * of `<t>.<raw body>` keyed with the whole endpoint secret (`whsec_...`, not decoded), any one `v1`
 * matching, the timestamp within the tolerance of now.
 */
export function checkStripeSignature(header: string | undefined, rawBody: Buffer, secret: string, nowSeconds: number): SignatureCheck {
  if (!header) return { valid: false, reason: 'The Stripe-Signature header is missing.' };
  const pairs = header.split(',').map((part) => part.trim().split('=', 2) as [string, string | undefined]);
  const timestamps = pairs.filter(([name]) => name === 't').map(([, value]) => value ?? '');
  const signatures = pairs.filter(([name, value]) => name === 'v1' && value).map(([, value]) => value as string);
  if (timestamps.length !== 1 || !/^\d+$/.test(timestamps[0]) || signatures.length === 0) {
    return { valid: false, reason: 'The Stripe-Signature header must hold t=<unix time> and at least one v1=<signature>.' };
  }
  const timestamp = timestamps[0];
  if (Math.abs(nowSeconds - Number(timestamp)) > STRIPE_TOLERANCE_SECONDS) {
    return {
      valid: false,
      reason: `The Stripe-Signature timestamp is more than ${STRIPE_TOLERANCE_SECONDS} s from now: a replay, or a clock far off.`,
    };
  }
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  const matches = signatures.some((signature) => {
    const given = /^[0-9a-f]+$/i.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { valid: true } : { valid: false, reason: 'No v1 signature in Stripe-Signature matches the body.' };
}

/** The parts of a Stripe event this service reads. */
export interface StripeEvent {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

export function isStripeEvent(value: unknown): value is StripeEvent {
  const event = value as StripeEvent | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    typeof event.id === 'string' &&
    typeof event.type === 'string' &&
    typeof event.data?.object === 'object' &&
    event.data.object !== null
  );
}

/** Checkout events that mean "paid": the session completed paid, or a delayed payment succeeded. */
export const PAID_CHECKOUT_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

/**
 * A paid checkout: the reference it names (`client_reference_id`: a key id, when it is right), and
 * the credits it bought, or why none could be read.
 */
export type CheckoutPurchase =
  | { reference: string | undefined; credits: number }
  | { reference: string | undefined; credits: undefined; why: string; packMismatch?: true };

/** A pack the service sells: what a checkout naming it (metadata.pack_id) grants. */
export interface SoldPack {
  id: string;
  credits: number;
}

/**
 * What a paid checkout session bought: the key id in `client_reference_id`, and the credits of the
 * pack it names (`metadata.pack_id`, one of `packs`), else `metadata.credits`, else from
 * STRIPE_PRICE_CREDITS by the checkout's price (expanded line items, or `metadata.price_id`), times
 * the quantity. Undefined when the session is not paid.
 */
export function checkoutPurchase(
  session: Record<string, unknown>,
  priceCredits: Record<string, number>,
  packs: readonly SoldPack[],
): CheckoutPurchase | undefined {
  if (session.payment_status !== 'paid') return undefined;
  const reference = typeof session.client_reference_id === 'string' && session.client_reference_id ? session.client_reference_id : undefined;
  const metadata = ((typeof session.metadata === 'object' && session.metadata) || {}) as Record<string, unknown>;
  if (metadata.pack_id !== undefined) return packPurchase(reference, metadata, packs);
  if (metadata.credits !== undefined) {
    const why = statedCreditsProblem(metadata.credits);
    return why === undefined ? { reference, credits: Number(metadata.credits) } : { reference, credits: undefined, why };
  }
  const priced = pricedCredits(session, metadata, priceCredits);
  if (Number.isSafeInteger(priced) && priced >= 1 && priced <= MAX_BALANCE) return { reference, credits: priced };
  const why =
    priced === 0
      ? 'no metadata.credits, and no price of the checkout is in STRIPE_PRICE_CREDITS'
      : `the checkout's prices come to ${priced} credits, more than one grant may add (10^12)`;
  return { reference, credits: undefined, why };
}

/** A checkout of one of this service's packs: the pack decides the credits, and stated credits must agree with it. */
function packPurchase(reference: string | undefined, metadata: Record<string, unknown>, packs: readonly SoldPack[]): CheckoutPurchase {
  const shown = JSON.stringify(metadata.pack_id).slice(0, 40);
  const pack = packs.find((candidate) => candidate.id === metadata.pack_id);
  if (!pack) return { reference, credits: undefined, why: `metadata.pack_id ${shown} is not a credit pack of CREDIT_PACKS`, packMismatch: true };
  if (metadata.credits !== undefined && metadata.credits !== String(pack.credits)) {
    const stated = JSON.stringify(metadata.credits).slice(0, 40);
    return { reference, credits: undefined, why: `metadata.credits ${stated} is not the ${pack.credits} of pack ${shown}`, packMismatch: true };
  }
  return { reference, credits: pack.credits };
}

/** The checkout session a paid event is about: every event of one session credits it once. */
export function checkoutSessionId(event: StripeEvent): string {
  const id = event.data.object.id;
  return typeof id === 'string' && id !== '' ? id : event.id;
}

/** Why metadata.credits is not a number of credits to grant (Stripe keeps metadata as strings of digits), or undefined. */
function statedCreditsProblem(stated: unknown): string | undefined {
  const shown = JSON.stringify(stated).slice(0, 40);
  if (typeof stated !== 'string') return `metadata.credits is ${shown}: it must be a string of decimal digits, such as "500"`;
  if (stated.startsWith('-')) return `metadata.credits is ${shown}: it is negative`;
  if (/^\d+\.\d*$/.test(stated)) return `metadata.credits is ${shown}: it is not a whole number`;
  if (!/^\d+$/.test(stated)) return `metadata.credits is ${shown}: it must be written in decimal digits only, such as "500"`;
  const credits = Number(stated);
  if (credits === 0) return 'metadata.credits is "0": a purchase grants at least 1 credit';
  if (credits > MAX_BALANCE) return `metadata.credits is ${shown}: more than one grant may add (10^12)`;
  return undefined;
}

function pricedCredits(session: Record<string, unknown>, metadata: Record<string, unknown>, priceCredits: Record<string, number>): number {
  const lines = (session.line_items as { data?: Array<{ price?: { id?: string }; quantity?: number }> } | undefined)?.data;
  if (Array.isArray(lines)) {
    return lines.reduce((sum, line) => sum + (priceCredits[line.price?.id ?? ''] ?? 0) * (line.quantity ?? 1), 0);
  }
  return typeof metadata.price_id === 'string' ? (priceCredits[metadata.price_id] ?? 0) : 0;
}

/**
 * How the audit log names a client_reference_id: as it is when it has the form of an account's or a key's id, else by
 * a fingerprint, never the value, which may be a secret (a plain API key sent by mistake).
 */
export function referenceFingerprint(reference: string): string {
  if (KEY_ID_PATTERN.test(reference) || ACCOUNT_ID_PATTERN.test(reference)) return reference;
  return `sha256:${createHash('sha256').update(reference).digest('hex').slice(0, 16)}`;
}
