import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditReport } from '../../admin/admin-tokens.js';
import { AccountAdmin } from '../../billing/account-admin.js';
import { ACCOUNT_ID_PATTERN } from '../../billing/accounts.js';
import { KeyAdmin } from '../../billing/key-admin.js';
import { KEY_ID_PATTERN } from '../../billing/keys.js';
import {
  checkoutPurchase,
  checkoutSessionId,
  checkStripeSignature,
  isStripeEvent,
  PAID_CHECKOUT_EVENTS,
  referenceFingerprint,
  type StripeEvent,
} from '../../billing/stripe.js';
import { ApiError } from '../../errors.js';
import type { AppSettings, Services } from '../../services/services.js';
import { errorResponse, freeErrorResponses, noSecurity, successHeaders } from '../schemas/common.js';

type StripeSettings = NonNullable<AppSettings['stripe']>;

const OUTCOMES = ['credited', 'duplicate', 'ignored', 'unknown-key', 'refused', 'no-credits-stated', 'pack-mismatch'] as const;
type Outcome = (typeof OUTCOMES)[number];

const schema = {
  summary: "Stripe's webhook: a paid checkout tops up its key",
  description:
    'Verifies Stripe-Signature over the raw body with STRIPE_WEBHOOK_SECRET. On checkout.session.completed (or ' +
    'async_payment_succeeded) with payment_status "paid", tops up the account (or the key\'s account) named by client_reference_id with ' +
    'the credits of the pack in metadata.pack_id (a pack not in CREDIT_PACKS, or metadata.credits that disagree with it, credit ' +
    'nothing: pack-mismatch), else metadata.credits, or the credits STRIPE_PRICE_CREDITS gives its price; exactly once per checkout ' +
    'session, whichever of its events arrive. Every verified event is answered 200 so that Stripe stops retrying; what could not be ' +
    'credited is recorded in the audit log.',
  operationId: 'stripeWebhook',
  tags: ['billing'],
  security: noSecurity,
  response: {
    200: {
      description: 'Received; `outcome` says what was done with it.',
      headers: successHeaders('free'),
      type: 'object',
      required: ['received', 'outcome'],
      properties: { received: { type: 'boolean' }, outcome: { type: 'string', enum: [...OUTCOMES] } },
    },
    ...freeErrorResponses,
    400: errorResponse('The signature is missing, does not match the body, or is too old; or the body is not a Stripe event. Nothing was credited.'),
  },
} as const;

/** POST /billing/stripe/webhook, served when STRIPE_WEBHOOK_SECRET is set. */
export async function stripeWebhookRoute(app: FastifyInstance, services: Services, stripe: StripeSettings): Promise<void> {
  await app.register(async (scope) => {
    // The signature covers the bytes Stripe sent: the body is kept raw, and parsed only once verified.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/billing/stripe/webhook', { schema }, async (request) => {
      const raw = request.body;
      if (!Buffer.isBuffer(raw)) throw new ApiError('BAD_REQUEST', 'The body must be a Stripe event sent as application/json.');
      const check = checkStripeSignature(
        request.headers['stripe-signature'] as string | undefined,
        raw,
        stripe.webhookSecret,
        services.clock() / 1000,
      );
      if (!check.valid) throw new ApiError('BAD_REQUEST', `${check.reason} Nothing was credited.`);
      const event = parsedEvent(raw);
      return { received: true, outcome: await handle(services, stripe, request, event) };
    });
  });
}

function parsedEvent(raw: Buffer): StripeEvent {
  try {
    const event: unknown = JSON.parse(raw.toString('utf8'));
    if (isStripeEvent(event)) return event;
  } catch {}
  throw new ApiError('BAD_REQUEST', 'The body is not a Stripe event: a JSON object with id, type and data.object. Nothing was credited.');
}

async function handle(services: Services, stripe: StripeSettings, request: FastifyRequest, event: StripeEvent): Promise<Outcome> {
  const packs = services.checkout?.packs ?? [];
  const purchase = PAID_CHECKOUT_EVENTS.has(event.type) ? checkoutPurchase(event.data.object, stripe.priceCredits, packs) : undefined;
  if (!purchase) return 'ignored';
  // Only a reference of an account id's or a key id's form is looked up: anything else names no one (and may hold what no store keeps).
  const reference = purchase.reference;
  const payer = reference !== undefined && (ACCOUNT_ID_PATTERN.test(reference) || KEY_ID_PATTERN.test(reference)) ? reference : undefined;
  const target = purchase.reference === undefined ? event.id : referenceFingerprint(purchase.reference);
  // Stripe must not retry these forever: answered 200, and kept for the operator to settle by hand.
  const unpaid = async (outcome: Outcome, why: string) => {
    request.log.warn({ event: event.id, target }, `Stripe checkout not credited: ${why}`);
    await auditReport(services.store.admin, 'stripe', request.id)('billing.stripe.not-credited', target, {
      event_id: event.id,
      credits: purchase.credits ?? null,
      why,
    });
    return outcome;
  };
  if (purchase.credits === undefined) return unpaid(purchase.packMismatch ? 'pack-mismatch' : 'no-credits-stated', purchase.why);
  if (!payer) {
    const why =
      purchase.reference === undefined ? 'the checkout has no client_reference_id' : 'client_reference_id is not the id of an account or a key';
    return unpaid('unknown-key', why);
  }
  const actor = { name: 'stripe', requestId: request.id };
  const session = checkoutSessionId(event);
  const options = { reference: session, idempotencyRef: `stripe:${session}` };
  const result = payer.startsWith('acct_')
    ? await new AccountAdmin(services.store.ledger, actor, services.clock).topUp(payer, purchase.credits, options)
    : await new KeyAdmin(services.store.ledger, actor, services.clock).topUp(payer, purchase.credits, options);
  switch (result.outcome) {
    case 'topped-up':
      services.metrics?.grant(purchase.credits);
      return 'credited';
    case 'granted-before':
      return 'duplicate';
    case 'not-found':
      return unpaid('unknown-key', 'client_reference_id is not the id of an account or a key');
    default:
      return unpaid('refused', result.outcome === 'revoked' ? 'the key is revoked' : 'the balance would pass 10^12 credits');
  }
}
