import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { inOrder } from '../steps.js';
import { requireTokenStep, requireWriteStep } from './auth.js';
import { auditLogRoute } from './routes/audit-log.js';
import { createKeyRoute } from './routes/create-key.js';
import { documentRoutes } from './routes/documents.js';
import { getKeyRoute } from './routes/get-key.js';
import { keyChargesRoute } from './routes/key-charges.js';
import { keyEventsRoute } from './routes/key-events.js';
import { keyStatusRoutes } from './routes/key-status.js';
import { listKeysRoute } from './routes/list-keys.js';
import { metricsRoute } from './routes/metrics.js';
import { refillRoutes } from './routes/refill.js';
import { rollKeyRoute } from './routes/roll-key.js';
import { setKeyRateRoute } from './routes/set-key-rate.js';
import { currentTokenRoute } from './routes/token.js';
import { topUpKeyRoute } from './routes/topup-key.js';
import { updateKeyRoute } from './routes/update-key.js';
import { usageRoutes } from './routes/usage.js';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { webhookRoutes } from './routes/webhooks.js';

/** The admin API: every route needs an admin token; those that change something, one that is not read-only. */
export async function registerAdminRoutes(app: FastifyInstance, services: Services, settings: AppSettings): Promise<void> {
  await app.register(async (scope) => {
    scope.decorateRequest('adminToken', null);
    const requireToken = requireTokenStep(services.adminTokens);
    const read = { preHandler: inOrder([requireToken]) };
    const write = { preHandler: inOrder([requireToken, requireWriteStep]) };
    currentTokenRoute(scope, read);
    createKeyRoute(scope, services, write);
    listKeysRoute(scope, services, read);
    getKeyRoute(scope, services, read);
    keyChargesRoute(scope, services, read);
    keyEventsRoute(scope, services, read);
    topUpKeyRoute(scope, services, write);
    keyStatusRoutes(scope, services, write);
    setKeyRateRoute(scope, services, write);
    rollKeyRoute(scope, services, write);
    updateKeyRoute(scope, services, write);
    refillRoutes(scope, services, write);
    usageRoutes(scope, services, read);
    documentRoutes(scope, services, read, write);
    auditLogRoute(scope, services, read);
    webhookRoutes(scope, services, settings, read, write);
    webhookDeliveryRoutes(scope, services, read, write);
    if (services.metrics) metricsRoute(scope, services.metrics, settings.metricsPublic ? {} : read, settings.metricsPublic);
  });
}
