import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { envelopeSchema } from './schemas/common.js';

/** The OpenAPI 3.1 document, built from the route schemas registered after this. */
export async function registerOpenApi(app: FastifyInstance, serviceVersion: string): Promise<void> {
  await app.register(swagger, {
    // The free GET routes answer HEAD too (their headers, no body): the document says so.
    exposeHeadRoutes: true,
    // A HEAD operation is named after its GET's (getRootHead), in the form of every other name.
    transform: ({ schema, url }) => {
      const id = (schema as { operationId?: string } | undefined)?.operationId;
      return id?.endsWith('-head') ? { schema: { ...schema, operationId: `${id.slice(0, -5)}Head` }, url } : { schema, url };
    },
    // Shared schemas keep their own names in components.schemas (Envelope, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'metered-search',
        version: serviceVersion,
        description:
          'Credit-metered search and document API. Billable endpoints cost one credit per validated request, or the prices ' +
          'the operator sets (x-credits-charged says what a request took); ' +
          'errors are {"status", "message"} with status equal to the HTTP code.',
        license: { name: 'MIT', identifier: 'MIT' },
        contact: { name: 'The operator of this deployment' },
      },
      servers: [{ url: '/', description: 'This deployment' }],
      tags: [
        { name: 'free', description: 'No key needed; never charged.' },
        { name: 'keyed', description: 'Needs an API key; never charged.' },
        { name: 'billable', description: "Needs an API key; one credit per validated request, or the operator's price." },
        { name: 'admin', description: "The operator's API: needs an admin token (Authorization: Bearer)." },
        { name: 'billing', description: 'Called by the payment provider, signed with its webhook secret; served when it is configured.' },
        {
          name: 'portal',
          description:
            "The customer portal's own API (/portal): free. Signed in with an API key, a customer sees the account and manages only " +
            'that key; a session opened by a portal link (POST /admin/accounts/{id}/portal-sessions) manages every key of the account.',
        },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'A token from metered-search admin tokens create.' },
          portalSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'ms_portal',
            description: "The cookie a portal link opens; writes also send the session's x-csrf-token.",
          },
        },
      },
    },
  });
  app.addSchema({ $id: 'Envelope', description: 'Every error: status equals the HTTP status code.', ...envelopeSchema });
}

/** /openapi.json, and /docs: the interactive reference, self-hosted. */
export async function registerDocsPage(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // Self-hosted, perhaps on a private network: the key scheme preselected, no fonts fetched from
  // outside, and none of the buttons that lead to Scalar's hosted services.
  await app.register(apiReference, {
    routePrefix: '/docs',
    configuration: {
      url: '/openapi.json',
      authentication: { preferredSecurityScheme: 'apiKey' },
      hideClientButton: true,
      agent: { disabled: true },
      showDeveloperTools: 'never',
      withDefaultFonts: false,
    },
  });
}
