import type { FastifyInstance } from 'fastify';
import type { AppSettings, Services } from '../../services/services.js';
import { registerPage } from '../admin/console.js';
import { accountRoute } from './account.js';
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
  signInRoutes(app, services);
  accountRoute(app, services);
  keyRoutes(app, services);
  checkoutRoute(app, services, settings.portal.publicUrl);
}
