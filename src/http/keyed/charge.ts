import type { onResponseHookHandler } from 'fastify';
import type { CreditService } from '../../billing/credit-service.js';
import { hashApiKey } from '../../billing/key-admin.js';
import type { KeyRecord } from '../../billing/ledger.js';
import type { Metrics } from '../../metrics/metrics.js';
import { refusal } from './authenticate.js';
import type { Step } from './step.js';

/** Spends one credit for `endpoint` (402 at zero) and says what is left in x-credits-remaining. */
export function chargeStep(
  credits: CreditService,
  authenticate: Step,
  endpoint: string,
  options: { metrics: Metrics | undefined; purchaseUrl: string | undefined },
): Step {
  const { metrics, purchaseUrl } = options;
  return async (request, reply) => {
    const keyHash = request.caller?.keyHash ?? hashApiKey(request.headers['x-api-key'] as string);
    const paidBefore = request.idempotency?.chargeId;
    if (paidBefore != null) {
      // An earlier attempt with this Idempotency-Key paid and died before answering: run again, free,
      // if the key is still active.
      await authenticate(request, reply);
      const { key } = request.caller as { key: KeyRecord };
      request.charge = { chargeId: paidBefore, balance: key.balance };
    } else {
      const result = await credits.charge(keyHash, endpoint, request.idempotency?.claim.ref);
      metrics?.debit(result.outcome);
      if (result.outcome !== 'charged') throw refusal(result, {}, purchaseUrl);
      request.charge = { chargeId: result.chargeId, balance: result.balance };
    }
    // Every response after a successful debit says what is left, whatever its status (docs/api.md).
    reply.header('x-credits-remaining', String(request.charge.balance));
  };
}

/** Records the final status of a charged request on its charge, off the request path. */
export function recordOutcomeHook(credits: CreditService): onResponseHookHandler {
  return (request, reply, done) => {
    if (request.charge) credits.recordOutcome(request.charge.chargeId, reply.statusCode);
    done();
  };
}
