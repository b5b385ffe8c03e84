import type { FastifyRequest } from 'fastify';
import type { Credential, CreditService } from '../../billing/credit-service.js';
import { hashApiKey } from '../../billing/keys.js';
import type { Step } from '../steps.js';
import { expiredKey, refusal } from './refusals.js';

/** Checks the key (401/403) and sets request.caller. */
export function authenticateStep(credits: CreditService): Step {
  return async (request) => {
    const extra = request.routeOptions.config.authErrorExtra ?? {};
    const result = await credits.authenticate(request.headers['x-api-key'] as string);
    if (result.outcome === 'unknown-key') throw refusal(result, extra, undefined);
    if (result.outcome === 'inactive') throw refusal({ outcome: 'inactive', status: result.key.status }, extra, undefined);
    if (result.outcome === 'expired') throw expiredKey(result.key, extra);
    request.caller = { keyHash: result.keyHash, key: result.key };
  };
}

/**
 * Looks the key up, as known at most a second ago, without refusing it: on billable routes the
 * debit checks the key in the same statement that spends the credit, so the hot path makes one
 * store round trip and an unknown or inactive key is still refused before anything is spent.
 */
export function identifyStep(credits: CreditService): Step {
  // A key whose end has come is refused (403) before its debit, by the clock of this service.
  const identified = (request: FastifyRequest, credential: Credential) => {
    if (credential.key.expiresAt !== null && credits.expired(credential.key)) throw expiredKey(credential.key, {});
    request.caller = { keyHash: credential.keyHash, key: credential.key };
  };
  return (request) => {
    const known = credits.identify(hashApiKey(request.headers['x-api-key'] as string));
    if (!(known instanceof Promise)) {
      if (known) identified(request, known);
      return;
    }
    return known.then((credential) => {
      if (credential) identified(request, credential);
    });
  };
}
