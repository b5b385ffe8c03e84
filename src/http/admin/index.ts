import type { FastifyInstance } from 'fastify';
import type { AdminScope } from '../../admin/admin-scopes.js';
import type { AppSettings, Services } from '../../services/services.js';
import { embedPromptStep } from '../search/embed-prompt.js';
import { readSearchStep } from '../search/read-search.js';
import { requireSearchIndexStep } from '../search/search-index-step.js';
import { inOrder, type Step } from '../steps.js';
import { requireScopeStep, requireScopeToGrantStep, requireTokenStep } from './auth.js';
import { accountEventsRoute } from './routes/account-events.js';
import { accountRefillRoutes } from './routes/account-refill.js';
import { accountUsageRoute } from './routes/account-usage.js';
import { auditLogRoute } from './routes/audit-log.js';
import { createAccountRoute } from './routes/create-account.js';
import { createAccountKeyRoute } from './routes/create-account-key.js';
import { createKeyRoute } from './routes/create-key.js';
import { documentRoutes } from './routes/documents.js';
import { getAccountRoute } from './routes/get-account.js';
import { getKeyRoute } from './routes/get-key.js';
import { keyChargesRoute } from './routes/key-charges.js';
import { keyEventsRoute } from './routes/key-events.js';
import { keyStatusRoutes } from './routes/key-status.js';
import { listAccountsRoute } from './routes/list-accounts.js';
import { listKeysRoute } from './routes/list-keys.js';
import { metricsRoute } from './routes/metrics.js';
import { portalSessionRoutes } from './routes/portal-session.js';
import { refillRoutes } from './routes/refill.js';
import { rollKeyRoute } from './routes/roll-key.js';
import { adminSearchRoute } from './routes/search.js';
import { setKeyRateRoute } from './routes/set-key-rate.js';
import { synonymRoutes } from './routes/synonyms.js';
import { currentTokenRoute } from './routes/token.js';
import { topUpAccountRoute } from './routes/topup-account.js';
import { topUpKeyRoute } from './routes/topup-key.js';
import { updateAccountRoute } from './routes/update-account.js';
import { updateKeyRoute } from './routes/update-key.js';
import { usageRoutes } from './routes/usage.js';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { webhookRoutes } from './routes/webhooks.js';

/**
 * The admin API: every route needs an admin token, and each but GET /admin/token its one scope.
 * `servesPortal`: this app serves the portal too, so its own origin is the portal's.
 */
export async function registerAdminRoutes(
  app: FastifyInstance,
  services: Services,
  settings: AppSettings,
  options: { servesPortal: boolean },
): Promise<void> {
  await app.register(async (scope) => {
    scope.decorateRequest('adminToken', null);
    const requireToken = requireTokenStep(services.adminTokens);
    const needs = (needed: AdminScope, ...more: Step[]) => ({ preHandler: inOrder([requireToken, requireScopeStep(needed), ...more]) });
    // Creating an account or a key with credits grants them: that needs credits:write as well.
    const grants = (needed: AdminScope) => needs(needed, requireScopeToGrantStep);
    currentTokenRoute(scope, { preHandler: inOrder([requireToken]) });
    createAccountRoute(scope, services, grants('accounts:write'));
    listAccountsRoute(scope, services, needs('accounts:read'));
    getAccountRoute(scope, services, needs('accounts:read'));
    updateAccountRoute(scope, services, needs('accounts:write'));
    createAccountKeyRoute(scope, services, grants('keys:write'));
    topUpAccountRoute(scope, services, needs('credits:write'));
    accountRefillRoutes(scope, services, needs('credits:write'));
    accountUsageRoute(scope, services, needs('accounts:read'));
    accountEventsRoute(scope, services, needs('accounts:read'));
    const portalOrigin = { publicUrl: settings.portal.publicUrl, servesPortal: options.servesPortal };
    portalSessionRoutes(scope, services, portalOrigin, needs('portal:write'));
    createKeyRoute(scope, services, grants('keys:write'));
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
    // The search steps of /query without its charge: a semantic prompt is embedded for any token that may read documents.
    const search = [
      readSearchStep(services.search.language),
      requireSearchIndexStep(services.search),
      embedPromptStep(services.search, () => undefined),
    ];
    adminSearchRoute(scope, services, needs('documents:read', ...search));
    synonymRoutes(scope, services, needs('documents:read'), needs('documents:write'));
    auditLogRoute(scope, services, needs('audit:read'));
    webhookRoutes(scope, services, settings, needs('webhooks:read'), needs('webhooks:write'));
    webhookDeliveryRoutes(scope, services, needs('webhooks:read'), needs('webhooks:write'));
    if (services.metrics) metricsRoute(scope, services.metrics, settings.metricsPublic ? {} : needs('metrics:read'), settings.metricsPublic);
  });
}
