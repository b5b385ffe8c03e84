import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors.js';
import type { Services } from '../../services/services.js';
import type { RouteHooks } from '../steps.js';
import { portalCallerOf } from './caller.js';
import { portalErrorResponses, portalSecurity, portalSuccess } from './schemas.js';

const DAY_MS = 86_400_000;
const USAGE_DAYS = 30;
const RECENT_CHARGES = 20;

/** What a portal page says when there is nothing to buy with: how to get credits all the same. */
export const ASK_FOR_CREDITS = 'To get more credits, ask the operator who gave you your API key.';

const schema = {
  summary: 'The signed-in account, as its portal shows it',
  description:
    'Its balance and expiring credits, its keys, usage per day by endpoint and key over 30 days, its latest charges, and the credit ' +
    "packs it may buy. Signed in with an API key (x-api-key, never in a URL) or a portal session; the account is the key's, never another.",
  operationId: 'portalAccount',
  tags: ['portal'],
  security: portalSecurity,
  response: {
    200: portalSuccess('The account as its portal shows it.', {
      type: 'object',
      required: ['account', 'keys', 'usage', 'charges', 'packs', 'how_to_buy', 'signed_in_with'],
      additionalProperties: true,
      properties: {
        account: { type: 'object', additionalProperties: true, description: 'id, name, balance and expiring credits.' },
        keys: { type: 'array', items: { type: 'object', additionalProperties: true } },
        usage: { type: 'object', additionalProperties: true, description: 'from, to, series by day, and by_key.' },
        charges: { type: 'array', items: { type: 'object', additionalProperties: true } },
        packs: { type: 'array', items: { type: 'object', additionalProperties: true } },
        how_to_buy: { type: 'string' },
        signed_in_with: { type: 'string', enum: ['key', 'session'], description: 'key: manages only that key; session: every key.' },
        signed_in_key_id: { type: 'string' },
        csrf_token: { type: 'string', description: "A session's: every write with its cookie sends it in x-csrf-token." },
      },
    }),
    ...portalErrorResponses,
  },
} as const;

export function accountRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/portal/api/account', { schema, ...hooks }, async (request, reply) => {
    const caller = portalCallerOf(request);
    const { ledger } = services.store;
    const account = await ledger.findAccount(caller.accountId);
    if (!account) throw new ApiError('PORTAL_SIGN_IN_REQUIRED');
    const to = new Date(Math.floor(services.clock() / DAY_MS) * DAY_MS + DAY_MS).toISOString();
    const from = new Date(Date.parse(to) - USAGE_DAYS * DAY_MS).toISOString();
    const [keys, expiring, series, byKey, charges] = await Promise.all([
      ledger.accountKeys(account.id),
      ledger.expiringCredits(account.id),
      ledger.usage({ accountId: account.id, from, to, bucket: 'day' }),
      ledger.accountUsage(account.id, from, to),
      ledger.accountCharges(account.id, RECENT_CHARGES),
    ]);
    const activity = await Promise.all(keys.map((key) => ledger.keyActivity(key.id)));
    const checkout = services.checkout;
    reply.header('cache-control', 'no-store');
    return {
      account: { id: account.id, name: account.name, balance: account.balance, expiring },
      keys: keys.map((key, index) => ({
        id: key.id,
        name: key.name,
        status: key.status,
        created_at: key.createdAt,
        last_used_at: activity[index]?.lastUsedAt ?? null,
        expires_at: key.expiresAt,
      })),
      usage: {
        from,
        to,
        series,
        by_key: byKey.map((row) => ({ key_id: row.keyId, endpoint: row.endpoint, charges: row.charges, credits: row.credits })),
      },
      charges: charges.map((charge) => ({
        id: charge.id,
        key_id: charge.keyId,
        endpoint: charge.endpoint,
        at: charge.at,
        status: charge.outcomeStatus,
        credits: charge.credits,
      })),
      packs: checkout ? checkout.packs.map((pack) => ({ id: pack.id, credits: pack.credits, label: pack.label })) : [],
      how_to_buy: checkout ? 'Choose a pack: you pay on Stripe, and the credits arrive once the payment is made.' : ASK_FOR_CREDITS,
      signed_in_with: caller.via,
      ...(caller.via === 'key' && { signed_in_key_id: caller.keyId }),
      ...(caller.via === 'session' && { csrf_token: caller.csrf }),
    };
  });
}
