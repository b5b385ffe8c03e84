import type { FastifyInstance } from 'fastify';
import type { AdminTokenRecord } from '../../../admin/admin-store.js';
import { ApiError } from '../../../errors.js';
import { MAX_MEMBER_WORDS, MAX_SYNONYM_RULES, type SynonymRule } from '../../../search/synonyms.js';
import type { Services } from '../../../services/services.js';
import type { StoredSynonyms } from '../../../synonyms/synonym-store.js';
import { plainText } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders, adminWriteErrorResponses } from '../schemas.js';

const member = plainText({ minLength: 1, maxLength: 500, description: `A word, or a phrase of at most ${MAX_MEMBER_WORDS} words.` });

const ruleSchema = {
  anyOf: [
    {
      type: 'object',
      required: ['words'],
      additionalProperties: false,
      properties: { words: { type: 'array', minItems: 2, maxItems: 100, items: member, description: 'Members that all match each other.' } },
    },
    {
      type: 'object',
      required: ['from', 'to'],
      additionalProperties: false,
      properties: {
        from: member,
        to: { type: 'array', minItems: 1, maxItems: 100, items: member, description: 'What `from` matches too (not the other way).' },
      },
    },
  ],
} as const;

const rulesAnswer = {
  description: 'Every rule, as set; version rises with each change (0: never set).',
  headers: adminSuccessHeaders,
  type: 'object',
  required: ['synonyms', 'version', 'updated_at'],
  properties: {
    synonyms: { type: 'array', items: ruleSchema },
    version: { type: 'integer' },
    updated_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

const getSchema = {
  summary: 'The synonym rules',
  description: 'The rules /query applies to its words (lexical, and the lexical side of hybrid).',
  operationId: 'adminGetSynonyms',
  tags: ['admin'],
  security: adminSecurity,
  response: { 200: rulesAnswer, ...adminErrorResponses },
} as const;

const putSchema = {
  summary: 'Replace the synonym rules',
  description:
    `Sets (every member matches every other) and one-way rules (from matches to as well); a member may be a phrase, matched as one. ` +
    `Applied at query time, with no re-index: on every instance within a second. A word matched through a synonym scores as that synonym and is highlighted. ` +
    `At most ${MAX_SYNONYM_RULES} rules, each member at most ${MAX_MEMBER_WORDS} words. Audited (synonyms.set).`,
  operationId: 'adminPutSynonyms',
  tags: ['admin'],
  security: adminSecurity,
  body: {
    type: 'object',
    required: ['synonyms'],
    additionalProperties: false,
    properties: { synonyms: { type: 'array', items: ruleSchema } },
  },
  response: { 200: rulesAnswer, ...adminWriteErrorResponses },
} as const;

const fieldMessages = {
  synonyms:
    'synonyms must be a list of rules, each {"words": [at least 2 members]} or {"from": "member", "to": [members]}; a member is a non-empty string.',
};

const shown = (stored: StoredSynonyms) => ({ synonyms: stored.rules, version: stored.version, updated_at: stored.updatedAt });

/** GET and PUT /admin/synonyms: the synonym rules every search applies. */
export function synonymRoutes(app: FastifyInstance, services: Services, read: RouteHooks, write: RouteHooks): void {
  app.get('/admin/synonyms', { schema: getSchema, ...read }, async () => shown(await services.synonyms.list()));
  app.put('/admin/synonyms', { schema: putSchema, config: { fieldMessages }, ...write }, async (request) => {
    const { synonyms } = request.body as { synonyms: SynonymRule[] };
    const replaced = await services.synonyms.replace(synonyms, { actor: (request.adminToken as AdminTokenRecord).name, requestId: request.id });
    if ('error' in replaced) throw new ApiError('BAD_REQUEST', `${replaced.error} Nothing was changed.`);
    return shown(replaced);
  });
}
