import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { registerPage } from '../static-page.js';
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
  const auth = new PortalAuth(services, settings.portal.publicUrl);
  signInRoutes(app, services, auth);
  accountRoute(app, services, auth);
  keyRoutes(app, services, auth);
  checkoutRoute(app, services, auth, settings.portal.publicUrl);
}
