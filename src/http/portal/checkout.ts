import type { FastifyInstance } from 'fastify';
import { auditReport } from '../../admin/admin-tokens.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import { publicOrigin } from '../public-origin.js';
import { errorResponse } from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';
import { portalActor, portalCallerOf } from './caller.js';
import { portalErrorResponses, portalSecurity, portalSuccess } from './schemas.js';

const schema = {
  summary: 'Buy a credit pack',
  description:
    "Creates a Stripe Checkout Session for the pack, naming the caller's account (client_reference_id) and the credits " +
    '(metadata.credits), and answers its url, where the browser goes to pay. The credits arrive when Stripe reports the payment.',
  operationId: 'portalCheckout',
  tags: ['portal'],
  security: portalSecurity,
  body: {
    type: 'object',
    required: ['pack_id'],
    additionalProperties: false,
    properties: { pack_id: { type: 'string', minLength: 1, maxLength: 64 } },
  },
  response: {
    200: portalSuccess('Where the browser goes to pay.', { type: 'object', required: ['url'], properties: { url: { type: 'string' } } }),
    ...portalErrorResponses,
    404: errorResponse('No credit pack has this id, or this service sells none.'),
    502: errorResponse('Stripe did not create the checkout; nothing was charged.'),
  },
} as const;

export function checkoutRoute(app: FastifyInstance, services: Services, hooks: RouteHooks, publicUrl: string | undefined): void {
  app.post('/portal/api/checkout', { schema, ...hooks }, async (request) => {
    const caller = portalCallerOf(request);
    const checkout = services.checkout;
    if (!checkout) throw new ApiError('CHECKOUT_UNAVAILABLE');
    const pack = checkout.pack((request.body as { pack_id: string }).pack_id);
    if (!pack) throw new ApiError('PACK_NOT_FOUND');
    const origin = publicOrigin(request, publicUrl);
    let session: { id: string; url: string };
    try {
      session = await checkout.create(pack, caller.accountId, { successUrl: `${origin}/portal#bought`, cancelUrl: `${origin}/portal#buy` });
    } catch (error) {
      request.log.warn({ err: error }, 'Stripe checkout not created');
      throw new ApiError('CHECKOUT_FAILED');
    }
    await auditReport(services.store.admin, portalActor(caller), request.id)('portal.checkout', caller.accountId, {
      pack_id: pack.id,
      credits: pack.credits,
      checkout_session: session.id,
    });
    return { url: session.url };
  });
}
