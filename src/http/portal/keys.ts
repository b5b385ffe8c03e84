import type { FastifyInstance } from 'fastify';
import { KeyAdmin, MAX_ROLL_GRACE_SECONDS } from '../../billing/key-admin.js';
import type { KeyRecord } from '../../billing/ledger.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import { errorResponse, idParams, plainText } from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';
import { type PortalCaller, portalActor, portalCallerOf } from './caller.js';
import { portalErrorResponses, portalSecurity, portalSuccess } from './schemas.js';

/**
 * The caller's key with this id; 404 for a key of another account, as for one that does not exist.
 * Signed in with a key, the caller may change only that key (403 for the account's others).
 */
async function ownKey(services: Services, caller: PortalCaller, id: string): Promise<KeyRecord> {
  const key = await services.store.ledger.findKeyById(id);
  if (!key || key.accountId !== caller.accountId) throw new ApiError('KEY_NOT_FOUND', `Your account has no key with id "${id}".`);
  if (caller.via === 'key' && key.id !== caller.keyId) throw new ApiError('PORTAL_OTHER_KEY');
  if (key.status === 'revoked') throw new ApiError('KEY_REVOKED');
  return key;
}

/** Key changes made in the portal, audited with the account and what opened the portal (portalActor). */
const keysOf = (services: Services, caller: PortalCaller, requestId: string) =>
  new KeyAdmin(services.store.ledger, { name: portalActor(caller), requestId }, services.clock);

/** What a key change in the portal may answer besides success. */
const keyChangeResponses = {
  ...portalErrorResponses,
  404: errorResponse('The account has no key with this id.'),
  409: errorResponse('The key is revoked: it cannot be changed.'),
} as const;

const renameSchema = {
  summary: 'Name one of your keys',
  description: 'Signed in with a key, only that key; with a portal link session, any key of the account.',
  operationId: 'portalRenameKey',
  tags: ['portal'],
  security: portalSecurity,
  params: idParams,
  body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: plainText({ maxLength: 200 }) } },
  response: {
    200: portalSuccess('The key, renamed.', {
      type: 'object',
      required: ['id', 'name'],
      properties: { id: { type: 'string' }, name: { type: 'string' } },
    }),
    ...keyChangeResponses,
  },
} as const;

const rollSchema = {
  summary: 'Roll one of your keys',
  description:
    'A new plain key, shown only in this answer; the former key keeps answering API calls until old_key_valid_until, and never ' +
    'signs in to the portal. Signed in with a key, only that key; with a portal link session, any key of the account.',
  operationId: 'portalRollKey',
  tags: ['portal'],
  security: portalSecurity,
  params: idParams,
  body: {
    type: 'object',
    required: ['grace_seconds'],
    additionalProperties: false,
    properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: MAX_ROLL_GRACE_SECONDS } },
  },
  response: {
    200: portalSuccess('The new key.', {
      type: 'object',
      required: ['id', 'key', 'old_key_valid_until'],
      properties: {
        id: { type: 'string' },
        key: { type: 'string', description: 'The plain key: 64 hexadecimal characters, shown once.' },
        old_key_valid_until: { type: ['string', 'null'], format: 'date-time' },
      },
    }),
    ...keyChangeResponses,
  },
} as const;

/** PATCH /portal/api/keys/{id} and POST /portal/api/keys/{id}/roll. */
export function keyRoutes(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.patch('/portal/api/keys/:id', { schema: renameSchema, ...hooks }, async (request) => {
    const caller = portalCallerOf(request);
    const key = await ownKey(services, caller, (request.params as { id: string }).id);
    const change = await keysOf(services, caller, request.id).updateSettings(key.id, { name: (request.body as { name: string }).name });
    if (change.outcome !== 'changed') throw new ApiError('KEY_NOT_FOUND');
    services.credits.forget(key.id);
    return { id: change.key.id, name: change.key.name };
  });

  app.post('/portal/api/keys/:id/roll', { schema: rollSchema, ...hooks }, async (request) => {
    const caller = portalCallerOf(request);
    const key = await ownKey(services, caller, (request.params as { id: string }).id);
    const rolled = await keysOf(services, caller, request.id).roll(key.id, (request.body as { grace_seconds: number }).grace_seconds);
    if (rolled.outcome !== 'rolled') throw new ApiError(rolled.outcome === 'revoked' ? 'KEY_REVOKED' : 'KEY_NOT_FOUND');
    services.credits.forget(key.id);
    return { id: key.id, key: rolled.key, old_key_valid_until: rolled.oldKeyValidUntil };
  });
}
