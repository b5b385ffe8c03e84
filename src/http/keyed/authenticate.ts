import type { CreditService } from '../../billing/credit-service.js';
import { hashApiKey } from '../../billing/keys.js';
import type { DebitResult } from '../../billing/ledger.js';
import { ApiError, errorCatalogue } from '../../errors.js';
import type { Step } from './step.js';

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

/** The answer to a key the ledger refused: 401 unknown, 403 revoked or disabled, 402 at zero. */
export function refusal(
  result: Exclude<DebitResult, { outcome: 'charged' }>,
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

/** Checks the key (401/403) and sets request.caller. */
export function authenticateStep(credits: CreditService): Step {
  return async (request) => {
    const extra = request.routeOptions.config.authErrorExtra ?? {};
    const result = await credits.authenticate(request.headers['x-api-key'] as string);
    if (result.outcome === 'unknown-key') throw refusal(result, extra, undefined);
    if (result.outcome === 'inactive') throw refusal({ outcome: 'inactive', status: result.key.status }, extra, undefined);
    request.caller = { keyHash: result.keyHash, key: result.key };
  };
}

/**
 * Looks the key up, as known at most a second ago, without refusing it: on billable routes the
 * debit checks the key in the same statement that spends the credit, so the hot path makes one
 * store round trip and an unknown or inactive key is still refused before anything is spent.
 */
export function identifyStep(credits: CreditService): Step {
  return (request) => {
    const known = credits.identify(hashApiKey(request.headers['x-api-key'] as string));
    if (!(known instanceof Promise)) {
      if (known) request.caller = { keyHash: known.keyHash, key: known.key };
      return;
    }
    return known.then((credential) => {
      if (credential) request.caller = { keyHash: credential.keyHash, key: credential.key };
    });
  };
}
