import type { FastifyRequest, onResponseHookHandler } from 'fastify';
import type { CreditService } from '../../billing/credit-service.js';
import { hashApiKey } from '../../billing/keys.js';
import type { KeyRecord } from '../../billing/ledger.js';
import { hasSpendCaps, priceOf } from '../../billing/ledger-rules.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { Step } from '../steps.js';
import { capReached, priceNotCovered, purchaseUrlFor, refusal } from './refusals.js';

/**
 * The name a request is priced under when its endpoint's modes may be priced apart
 * ("/query:semantic"), read from what the route parsed; undefined: the endpoint's own price.
 */
export type PricedAs = (request: FastifyRequest) => string | undefined;

/** What a route's requests are priced as: its endpoint, and the mode of each request when modes are priced apart. */
interface Priced {
  endpoint: string;
  pricedAs: PricedAs | undefined;
}

/**
 * Spends what a request to `endpoint` costs this key (402 when the balance does not cover all of
 * it) and says what it took and what is left in x-credits-charged and x-credits-remaining.
 */
export function chargeStep(
  credits: CreditService,
  authenticate: Step,
  { endpoint, pricedAs }: Priced,
  options: { metrics: Metrics | undefined; purchaseUrl: string | undefined; prices: Partial<Record<string, number>> },
): Step {
  const { metrics, purchaseUrl, prices } = options;
  return async (request, reply) => {
    const keyHash = request.caller?.keyHash ?? hashApiKey(request.headers['x-api-key'] as string);
    const paidBefore = request.idempotency?.chargeId;
    if (request.uncharged) {
      reply.header('x-credits-charged', '0');
      reply.header('x-credits-remaining', String((request.caller as { key: KeyRecord }).key.balance));
      return;
    }
    if (paidBefore != null) {
      // An earlier attempt with this Idempotency-Key paid and died before answering: run again, free,
      // if the key is still active.
      await authenticate(request, reply);
      const { key } = request.caller as { key: KeyRecord };
      request.charge = { chargeId: paidBefore, balance: key.balance };
      reply.header('x-credits-charged', '0');
    } else {
      const cost = priceOf(endpoint, request.caller?.key ?? null, prices, pricedAs?.(request));
      const options = { idempotencyRef: request.idempotency?.claim.ref, cost };
      const capped = request.caller && hasSpendCaps(request.caller.key) ? request.caller.key : undefined;
      const result = capped ? await credits.chargeCapped(capped, endpoint, options) : await credits.charge(keyHash, endpoint, options);
      metrics?.debit(result.outcome);
      if (result.outcome === 'capped') throw capReached(result.balance, result.reached, credits.now());
      if (result.outcome !== 'charged') {
        const buyAt = purchaseUrlFor(purchaseUrl, request.caller?.key.accountId);
        throw result.outcome === 'no-credits' ? priceNotCovered(cost, buyAt) : refusal(result, {}, buyAt);
      }
      metrics?.spend(cost);
      request.charge = { chargeId: result.chargeId, balance: result.balance };
      reply.header('x-credits-charged', String(cost));
    }
    // Every response after a successful debit says what is left, whatever its status (docs/api.md).
    reply.header('x-credits-remaining', String(request.charge.balance));
  };
}

/**
 * Refuses now what the charge would refuse, for a route that does costly work before it (a call
 * to the embedding model): the key read from the store (401, 403), a balance short of the price
 * (402), a spend cap the price would pass (429). The charge still decides, atomically, after.
 */
export function payableStep(
  credits: CreditService,
  authenticate: Step,
  { endpoint, pricedAs }: Priced,
  options: { purchaseUrl: string | undefined; prices: Partial<Record<string, number>> },
): Step {
  return async (request, reply) => {
    await authenticate(request, reply);
    if (request.idempotency?.chargeId != null) return;
    const { key } = request.caller as { key: KeyRecord };
    const cost = priceOf(endpoint, key, options.prices, pricedAs?.(request));
    if (key.balance < cost) throw priceNotCovered(cost, purchaseUrlFor(options.purchaseUrl, key.accountId));
    const reached = hasSpendCaps(key) ? await credits.capPassedBy(key, cost) : undefined;
    if (reached) throw capReached(key.balance, reached, credits.now());
  };
}

/** Records the final status of a charged request on its charge, off the request path. */
export function recordOutcomeHook(credits: CreditService): onResponseHookHandler {
  return (request, reply, done) => {
    if (request.charge) credits.recordOutcome(request.charge.chargeId, reply.statusCode);
    done();
  };
}
