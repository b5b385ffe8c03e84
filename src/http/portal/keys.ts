import type { FastifyInstance } from 'fastify';
import { KeyAdmin, MAX_ROLL_GRACE_SECONDS } from '../../billing/key-admin.js';
import type { KeyRecord } from '../../billing/ledger.js';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import { idParams } from '../admin/schemas.js';
import { plainText } from '../schemas/common.js';
import { type PortalAuth, type PortalCaller, portalActor } from './caller.js';

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

const renameSchema = {
  summary: 'Name one of your keys',
  tags: ['portal'],
  hide: true,
  params: idParams,
  body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: plainText({ maxLength: 200 }) } },
} as const;

const rollSchema = {
  summary: 'Roll one of your keys',
  description: 'A new plain key, shown only in this answer; the former key keeps working until old_key_valid_until.',
  tags: ['portal'],
  hide: true,
  params: idParams,
  body: {
    type: 'object',
    required: ['grace_seconds'],
    additionalProperties: false,
    properties: { grace_seconds: { type: 'integer', minimum: 0, maximum: MAX_ROLL_GRACE_SECONDS } },
  },
} as const;

/** PATCH /portal/api/keys/{id} and POST /portal/api/keys/{id}/roll. */
export function keyRoutes(app: FastifyInstance, services: Services, auth: PortalAuth): void {
  app.patch('/portal/api/keys/:id', { schema: renameSchema }, async (request) => {
    const caller = await auth.caller(request);
    const key = await ownKey(services, caller, (request.params as { id: string }).id);
    const change = await keysOf(services, caller, request.id).updateSettings(key.id, { name: (request.body as { name: string }).name });
    if (change.outcome !== 'changed') throw new ApiError('KEY_NOT_FOUND');
    services.credits.forget(key.id);
    return { id: change.key.id, name: change.key.name };
  });

  app.post('/portal/api/keys/:id/roll', { schema: rollSchema }, async (request) => {
    const caller = await auth.caller(request);
    const key = await ownKey(services, caller, (request.params as { id: string }).id);
    const rolled = await keysOf(services, caller, request.id).roll(key.id, (request.body as { grace_seconds: number }).grace_seconds);
    if (rolled.outcome !== 'rolled') throw new ApiError(rolled.outcome === 'revoked' ? 'KEY_REVOKED' : 'KEY_NOT_FOUND');
    services.credits.forget(key.id);
    return { id: key.id, key: rolled.key, old_key_valid_until: rolled.oldKeyValidUntil };
  });
}
