import type { FastifyInstance } from 'fastify';
import { keyedGroup } from '../keyed.js';
import type { AppSettings, Services } from '../../services/services.js';
import { creditsRoute } from './credits.js';
import { documentRoute } from './document.js';
import { faceSearchRoute } from './face-search.js';
import { nettestRoute } from './nettest.js';
import { profileRoute } from './profile.js';
import { queryRoute } from './query.js';
import { rootRoute } from './root.js';
import { versionRoute } from './version.js';

/** The public group needs no key; the keyed group authenticates, and billable routes charge. */
export async function registerRoutes(app: FastifyInstance, services: Services, settings: AppSettings): Promise<void> {
  await app.register(async (publicScope) => {
    rootRoute(publicScope);
    versionRoute(publicScope, settings.serviceVersion);
    profileRoute(publicScope);
    nettestRoute(publicScope, services);
  });

  await app.register(async (keyedScope) => {
    keyedGroup(keyedScope, services);
    creditsRoute(keyedScope);
    documentRoute(keyedScope, services);
    queryRoute(keyedScope, services);
    faceSearchRoute(keyedScope, services, settings);
  });
}
