import { ApiError } from '../../errors.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { RateLimitDecision, RateLimitService } from '../../rate-limit/rate-limit.js';
import type { Step } from '../steps.js';

const POLICY = 'per-key';

/** The IETF RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers). */
function rateLimitHeaders(decision: Extract<RateLimitDecision, { limited: true }>): Record<string, string> {
  return {
    'ratelimit-policy': `"${POLICY}";q=${decision.capacity};w=1`,
    ratelimit: `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

/** The key's requests per second (429 with Retry-After and the RateLimit headers). */
export function limitRateStep(rateLimits: RateLimitService, metrics: Metrics | undefined): Step {
  return (request, reply) => {
    const caller = request.caller;
    if (!caller || rateLimits.perSecondFor(caller.key) <= 0) return;
    return rateLimits.take(caller.key.id, caller.key).then((decision) => {
      if (!decision.limited) return;
      reply.headers(rateLimitHeaders(decision));
      if (decision.allowed) return;
      metrics?.limited();
      throw new ApiError('RATE_LIMITED', undefined, { headers: { 'retry-after': String(decision.retryAfterSeconds) } });
    });
  };
}
