/** What the keyed steps set on a request, for the steps and handlers after them. */
import type { KeyRecord } from '../../billing/ledger.js';
import type { Claim } from '../../idempotency/idempotency-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key: checked by authentication, or (billable routes) as last known, the debit checking it. */
    caller: { keyHash: string; key: KeyRecord } | null;
    /** The charge this request paid; set by the charge step. */
    charge: { chargeId: number; balance: number } | null;
    /** This request's claim on its Idempotency-Key; `chargeId` when an earlier attempt already paid. */
    idempotency: { claim: Claim; chargeId: number | null } | null;
    /** Set by a step that checked the key and its credits and found nothing to charge for (a hybrid query answered lexically). */
    uncharged?: boolean;
  }
  interface FastifyContextConfig {
    /** Fields added to 401/403 bodies, such as /credits' "current_balance": null. */
    authErrorExtra?: Record<string, unknown>;
  }
}
