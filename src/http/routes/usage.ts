import type { FastifyInstance } from 'fastify';
import type { KeyRecord } from '../../billing/ledger.js';
import type { Services } from '../../services/services.js';
import { keyedErrorResponses, keyedHeaders, security, successHeaders } from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';
import { usageSpan } from '../usage.js';

const schema = {
  summary: 'Your usage (free)',
  description: "The calling key's charges by day and endpoint over the last 30 days. Never another key's; never charged.",
  operationId: 'getUsage',
  tags: ['keyed'],
  security,
  headers: keyedHeaders,
  response: {
    200: {
      description: 'Charges by day (UTC) and endpoint, oldest first.',
      headers: successHeaders('keyed'),
      type: 'object',
      required: ['status', 'days'],
      properties: {
        status: { type: 'integer' },
        days: {
          type: 'array',
          items: {
            type: 'object',
            required: ['date', 'endpoint', 'count'],
            properties: { date: { type: 'string', format: 'date' }, endpoint: { type: 'string' }, count: { type: 'integer' } },
          },
        },
      },
    },
    ...keyedErrorResponses,
  },
} as const;

export function usageRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/usage', { schema, ...hooks }, async (request) => {
    const key = request.caller?.key as KeyRecord;
    const rows = await services.store.ledger.usage({ keyId: key.id, ...usageSpan({ bucket: 'day' }) });
    const byDay = new Map<string, { date: string; endpoint: string; count: number }>();
    for (const row of rows) {
      const date = row.start.slice(0, 10);
      const entry = byDay.get(`${date} ${row.endpoint}`) ?? { date, endpoint: row.endpoint, count: 0 };
      entry.count += row.count;
      byDay.set(`${date} ${row.endpoint}`, entry);
    }
    return { status: 200, days: [...byDay.values()] };
  });
}
