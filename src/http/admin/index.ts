import type { FastifyInstance } from 'fastify';
import type { AdminScope } from '../../admin/admin-scopes.js';
import type { AppSettings, Services } from '../../services/services.js';
import { inOrder } from '../steps.js';
import { requireScopeStep, requireTokenStep } from './auth.js';
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

/** The admin API: every route needs an admin token, and each but GET /admin/token its one scope. */
export async function registerAdminRoutes(app: FastifyInstance, services: Services, settings: AppSettings): Promise<void> {
  await app.register(async (scope) => {
    scope.decorateRequest('adminToken', null);
    const requireToken = requireTokenStep(services.adminTokens);
    const needs = (needed: AdminScope) => ({ preHandler: inOrder([requireToken, requireScopeStep(needed)]) });
    currentTokenRoute(scope, { preHandler: inOrder([requireToken]) });
    createKeyRoute(scope, services, needs('keys:write'));
    listKeysRoute(scope, services, needs('keys:read'));
    getKeyRoute(scope, services, needs('keys:read'));
    keyChargesRoute(scope, services, needs('keys:read'));
    keyEventsRoute(scope, services, needs('keys:read'));
    topUpKeyRoute(scope, services, needs('credits:write'));
    keyStatusRoutes(scope, services, needs('keys:write'));
    setKeyRateRoute(scope, services, needs('keys:write'));
    rollKeyRoute(scope, services, needs('keys:write'));
    updateKeyRoute(scope, services, needs('keys:write'));
    refillRoutes(scope, services, needs('credits:write'));
    usageRoutes(scope, services, needs('keys:read'));
    documentRoutes(scope, services, needs('documents:read'), needs('documents:write'));
    auditLogRoute(scope, services, needs('audit:read'));
    webhookRoutes(scope, services, settings, needs('webhooks:read'), needs('webhooks:write'));
    webhookDeliveryRoutes(scope, services, needs('webhooks:read'), needs('webhooks:write'));
    if (services.metrics) metricsRoute(scope, services.metrics, settings.metricsPublic ? {} : needs('metrics:read'), settings.metricsPublic);
  });
}
