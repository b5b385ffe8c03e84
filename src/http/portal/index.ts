import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { registerPage } from '../static-page.js';
import { inOrder, type RouteHooks } from '../steps.js';
import { accountRoute } from './account.js';
import { PortalAuth } from './caller.js';
import { checkoutRoute } from './checkout.js';
import { keyRoutes } from './keys.js';
import { signInRoutes } from './sign-in.js';

/**
 * The customer portal on the public listener: /portal (a static page like the console) and its API
 * under /portal/api, which answers only about the signed-in account. It is free: nothing in it
 * spends credits. Its routes are the page's own, validated by their schemas and left out of the
 * OpenAPI document, which describes the API callers and operators program against.
 */
export function registerPortal(app: FastifyInstance, services: Services, settings: Pick<AppSettings, 'portal'>): void {
  registerPage(app, 'portal');
  app.decorateRequest('portalCaller', null);
  const auth = new PortalAuth(services, settings.portal.publicUrl);
  // Every portal API route but the sign-in link's is declared with the caller's check as its step.
  const signedIn: RouteHooks = { preHandler: inOrder([auth.signedIn]) };
  signInRoutes(app, services, auth, signedIn);
  accountRoute(app, services, signedIn);
  keyRoutes(app, services, signedIn);
  checkoutRoute(app, services, signedIn, settings.portal.publicUrl);
}
