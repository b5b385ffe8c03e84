import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { keyedSteps } from '../keyed/index.js';
import { embedPromptStep } from '../search/embed-prompt.js';
import { pricedModeOf, readSearchStep } from '../search/read-search.js';
import { requireSearchIndexStep } from '../search/search-index-step.js';
import { creditsRoute } from './credits.js';
import { documentRoute } from './document.js';
import { faceSearchRoute, faceSearchSteps } from './face-search.js';
import { healthRoutes } from './health.js';
import { nettestRoute } from './nettest.js';
import { profileRoute } from './profile.js';
import { queryRoute } from './query.js';
import { rootRoute } from './root.js';
import { stripeWebhookRoute } from './stripe-webhook.js';
import { usageRoute } from './usage.js';
import { versionRoute } from './version.js';

/**
 * The public group needs no key. In the keyed group each route's steps run in the order written
 * here, after its schema has validated the request: a request refused by any step is not charged,
 * and `charge` comes last. Billable routes that need nothing of the key before the debit only
 * `identify` it, leaving the check to the debit itself (see keyed/authenticate.ts).
 */
export async function registerRoutes(app: FastifyInstance, services: Services, settings: AppSettings): Promise<void> {
  await app.register(async (publicScope) => {
    rootRoute(publicScope);
    versionRoute(publicScope, settings.serviceVersion);
    profileRoute(publicScope);
    nettestRoute(publicScope, services);
    healthRoutes(publicScope, services);
    if (settings.stripe) await stripeWebhookRoute(publicScope, services, settings.stripe);
  });

  await app.register(async (keyedScope) => {
    const { authenticate, identify, limitRate, claimIdempotencyKey, charge, payable, free, billable } = keyedSteps(keyedScope, services, settings);
    const face = faceSearchSteps(keyedScope, services, settings);
    creditsRoute(keyedScope, services, settings, free(authenticate, limitRate));
    usageRoute(keyedScope, services, free(authenticate, limitRate));
    documentRoute(keyedScope, services, billable(identify, limitRate, claimIdempotencyKey, charge('/document')));
    const requireSearchIndex = requireSearchIndexStep(services.search);
    // A semantic or hybrid prompt is embedded only for a request that would pay: payable refuses first.
    // Both price the search request by its mode.
    const embedPrompt = embedPromptStep(services.search, payable('/query', pricedModeOf));
    queryRoute(
      keyedScope,
      services,
      billable(
        readSearchStep(services.search.language),
        identify,
        limitRate,
        claimIdempotencyKey,
        requireSearchIndex,
        embedPrompt,
        charge('/query', pricedModeOf),
      ),
    );
    faceSearchRoute(
      keyedScope,
      services,
      settings,
      billable(authenticate, limitRate, claimIdempotencyKey, face.requireFaceService, face.fetchProbeImage, charge('/face/search')),
    );
  });
}
