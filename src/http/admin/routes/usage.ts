import type { FastifyInstance } from 'fastify';
import type { UsageBucket } from '../../../billing/ledger.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { jsonOrCsv, usageCsv, usageQuerystring, usageSeries, usageSpan, usageTotals, usageTotalsOf, wantsCsv } from '../../usage.js';
import { existingKey } from '../keys.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders } from '../schemas.js';

const TOP_KEYS = 10;

interface UsageQuerystring {
  from?: string;
  to?: string;
  bucket: UsageBucket;
}

const keyUsageSchema = {
  summary: "A key's usage over time",
  description: 'Its charges by hour or day, endpoint and final status; the counts equal the recorded charges. Accept: text/csv gives CSV.',
  operationId: 'adminKeyUsage',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  querystring: usageQuerystring,
  response: {
    200: jsonOrCsv(
      {
        description: 'The series and its totals.',
        headers: adminSuccessHeaders,
        type: 'object',
        required: ['series', 'totals'],
        properties: { series: usageSeries, totals: usageTotals },
      },
      'The series as CSV: bucket start, endpoint, status, count and credits per row.',
    ),
    404: errorResponse('No key has this id.'),
    ...adminErrorResponses,
  },
} as const;

const allUsageSchema = {
  summary: 'Usage over time, all keys',
  description: 'Every charge by hour or day, endpoint and final status, and the keys that paid the most. Accept: text/csv gives the series as CSV.',
  operationId: 'adminUsage',
  tags: ['admin'],
  security: adminSecurity,
  querystring: usageQuerystring,
  response: {
    200: jsonOrCsv(
      {
        description: 'The series, its totals and the top keys by charges.',
        headers: adminSuccessHeaders,
        type: 'object',
        required: ['series', 'totals', 'top_keys'],
        properties: {
          series: usageSeries,
          totals: usageTotals,
          top_keys: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'name', 'charges', 'credits'],
              properties: {
                id: { type: 'string' },
                name: { type: 'string' },
                charges: { type: 'integer' },
                credits: { type: 'integer', description: 'Credits spent: the charges at their prices. The keys are ordered by it.' },
              },
            },
          },
        },
      },
      'The series as CSV: bucket start, endpoint, status, count and credits per row.',
    ),
    ...adminErrorResponses,
  },
} as const;

/** GET /admin/keys/{id}/usage and GET /admin/usage. */
export function usageRoutes(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  const { ledger } = services.store;
  app.get('/admin/keys/:id/usage', { schema: keyUsageSchema, ...hooks }, async (request, reply) => {
    const key = await existingKey(services.store, (request.params as { id: string }).id);
    const span = usageSpan(request.query as UsageQuerystring);
    const series = await ledger.usage({ keyId: key.id, ...span });
    if (wantsCsv(request.headers.accept)) return reply.type('text/csv; charset=utf-8').send(usageCsv(series));
    return { series, totals: usageTotalsOf(series) };
  });
  app.get('/admin/usage', { schema: allUsageSchema, ...hooks }, async (request, reply) => {
    const span = usageSpan(request.query as UsageQuerystring);
    const series = await ledger.usage(span);
    if (wantsCsv(request.headers.accept)) return reply.type('text/csv; charset=utf-8').send(usageCsv(series));
    const top = await ledger.topSpenders(span.from, span.to, TOP_KEYS);
    return {
      series,
      totals: usageTotalsOf(series),
      top_keys: top.map((entry) => ({ id: entry.keyId, name: entry.name, charges: entry.charges, credits: entry.credits })),
    };
  });
}
