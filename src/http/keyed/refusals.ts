import type { DebitResult, KeyRecord } from '../../billing/ledger.js';
import type { CapReached } from '../../billing/spend-caps.js';
import { ApiError, errorCatalogue } from '../../errors.js';

/** The catalogue's answers to a key the ledger refused, shared by the authenticate and charge steps. */

/** How a 402 says whom to ask when no CREDITS_PURCHASE_URL is set; replaced by where to buy when one is. */
export const ASK_THE_OPERATOR = ' Ask the operator who gave you this API key for more credits.';

/** 402, naming where to buy credits when CREDITS_PURCHASE_URL is set (in the message and as purchase_url), else whom to ask. */
export function noCredits(purchaseUrl: string | undefined, message?: string, extra: Record<string, unknown> = {}): ApiError {
  const base = message ?? errorCatalogue.NO_CREDITS.message;
  if (purchaseUrl === undefined) return new ApiError('NO_CREDITS', base, { extra });
  return new ApiError('NO_CREDITS', `${base.replace(ASK_THE_OPERATOR, '')} Buy more at ${purchaseUrl}`, {
    extra: { ...extra, purchase_url: purchaseUrl },
  });
}

/** 402 for a price the balance does not cover: a price above 1 says so. */
export function priceNotCovered(cost: number, purchaseUrl: string | undefined): ApiError {
  if (cost <= 1) return noCredits(purchaseUrl);
  return noCredits(purchaseUrl, `This request costs ${cost} credits and the API key has fewer left: nothing was charged.${ASK_THE_OPERATOR}`);
}

/**
 * Where this key's holder buys credits: CREDITS_PURCHASE_URL with the key's account id as
 * `client_reference_id` (the parameter a Stripe Payment Link passes on to its checkout, which
 * POST /billing/stripe/webhook credits), never the key itself. Undefined without the setting.
 */
export function purchaseUrlFor(purchaseUrl: string | undefined, accountId: string | undefined): string | undefined {
  if (purchaseUrl === undefined || accountId === undefined) return purchaseUrl;
  const url = new URL(purchaseUrl);
  url.searchParams.set('client_reference_id', accountId);
  return url.toString();
}

/** The answer to a key the ledger refused: 401 unknown, 403 revoked or disabled, 402 at zero (a spend cap's 429 is capReached). */
export function refusal(
  result: Exclude<DebitResult, { outcome: 'charged' | 'capped' }>,
  extra: Record<string, unknown>,
  purchaseUrl: string | undefined,
): ApiError {
  switch (result.outcome) {
    case 'unknown-key':
      return new ApiError('UNKNOWN_KEY', undefined, { extra });
    case 'inactive':
      return new ApiError(result.status === 'revoked' ? 'REVOKED_KEY' : 'DISABLED_KEY', undefined, { extra });
    case 'no-credits':
      return noCredits(purchaseUrl);
  }
}

/** 429 for a price that would take a spend cap's period over the cap: when it resets, and what is left. */
export function capReached(balance: number, reached: CapReached, now: number): ApiError {
  const { holder, cap, spent, resetsAt } = reached;
  const seconds = Math.max(1, Math.ceil((Date.parse(resetsAt) - now) / 1000));
  const spender = holder === 'key' ? 'This API key has' : "This API key's account has";
  return new ApiError(
    'SPEND_CAP_REACHED',
    `${spender} spent ${spent} of its cap of ${cap.credits} credits a ${cap.interval}; the cap resets at ${resetsAt}. Nothing was charged.`,
    { headers: { 'retry-after': String(seconds), 'x-credits-remaining': String(balance) } },
  );
}

/** 403 for a key whose end (expires_at) has come, saying when. */
export function expiredKey(key: KeyRecord, extra: Record<string, unknown>): ApiError {
  return new ApiError('EXPIRED_KEY', `The API key expired at ${key.expiresAt}. Ask the operator for a new one.`, { extra });
}
