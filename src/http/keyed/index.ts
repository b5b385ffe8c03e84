import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { inOrder, type RouteHooks, type Step } from '../steps.js';
import { authenticateStep, identifyStep } from './authenticate.js';
import { chargeStep, type PricedAs, payableStep, recordOutcomeHook } from './charge.js';
import { claimIdempotencyKeyStep, settleIdempotencyKeyHook } from './idempotency.js';
import { limitRateStep } from './rate-limit.js';

export interface KeyedSteps {
  /** Checks the key (401/403) and sets request.caller. */
  authenticate: Step;
  /** Looks the key up without refusing it, for a route whose debit checks the key (authenticate.ts). */
  identify: Step;
  /** The key's requests per second (429). */
  limitRate: Step;
  /** Claims the Idempotency-Key: a replay, 409 while the first attempt runs, 422 if the request differs. */
  claimIdempotencyKey: Step;
  /** Spends what the request costs (402 when the balance does not cover it); `pricedAs`: see PricedAs. */
  charge(endpoint: string, pricedAs?: PricedAs): Step;
  /** Refuses ahead of costly work what `charge(endpoint, pricedAs)` would refuse (401, 403, 402, 429); the charge still decides. */
  payable(endpoint: string, pricedAs?: PricedAs): Step;
  /** A free keyed route: its steps as one preHandler. */
  free(...steps: Step[]): RouteHooks;
  /** A billable route: its steps, then keeping the response for replay and recording the charge's outcome. */
  billable(...steps: Step[]): RouteHooks;
}

/** The steps keyed routes are declared with (routes/index.ts puts them in order), bound to the services. */
export function keyedSteps(scope: FastifyInstance, services: Services, settings: Pick<AppSettings, 'purchaseUrl' | 'prices'>): KeyedSteps {
  const { credits, idempotency, rateLimits, metrics } = services;
  scope.decorateRequest('caller', null);
  scope.decorateRequest('charge', null);
  scope.decorateRequest('idempotency', null);
  const authenticate = authenticateStep(credits);
  const settleIdempotencyKey = settleIdempotencyKeyHook(idempotency);
  const recordOutcome = recordOutcomeHook(credits);
  return {
    authenticate,
    identify: identifyStep(credits),
    limitRate: limitRateStep(rateLimits, metrics),
    claimIdempotencyKey: claimIdempotencyKeyStep(idempotency, authenticate, metrics),
    charge: (endpoint, pricedAs) =>
      chargeStep(credits, authenticate, { endpoint, pricedAs }, { metrics, purchaseUrl: settings.purchaseUrl, prices: settings.prices }),
    payable: (endpoint, pricedAs) =>
      payableStep(credits, authenticate, { endpoint, pricedAs }, { purchaseUrl: settings.purchaseUrl, prices: settings.prices }),
    free: (...steps) => ({ preHandler: inOrder(steps) }),
    billable: (...steps) => ({ preHandler: inOrder(steps), onSend: settleIdempotencyKey, onResponse: recordOutcome }),
  };
}
