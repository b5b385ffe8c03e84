import type { FastifyInstance } from 'fastify';
import type { AccountUsageRow } from '../../../billing/accounts.js';
import type { UsageBucket } from '../../../billing/ledger.js';
import type { Services } from '../../../services/services.js';
import { errorResponse, idParams } from '../../schemas/common.js';
import type { RouteHooks } from '../../steps.js';
import { jsonOrCsv, usageQuerystring, usageSeries, usageSpan, usageTotals, usageTotalsOf, wantsCsv } from '../../usage.js';
import { existingAccount } from '../accounts.js';
import { adminErrorResponses, adminSecurity, adminSuccessHeaders } from '../schemas.js';

const schema = {
  summary: "An account's usage over time, by key and endpoint",
  description:
    "The charges of all the account's keys by hour or day, endpoint and final status, and in the span by key and endpoint. " +
    'Accept: text/csv gives the rows by key and endpoint as CSV.',
  operationId: 'adminAccountUsage',
  tags: ['admin'],
  security: adminSecurity,
  params: idParams,
  querystring: usageQuerystring,
  response: {
    200: jsonOrCsv(
      {
        description: 'The series, its totals, and the span by key and endpoint.',
        headers: adminSuccessHeaders,
        type: 'object',
        required: ['series', 'totals', 'by_key'],
        properties: {
          series: usageSeries,
          totals: usageTotals,
          by_key: {
            type: 'array',
            items: {
              type: 'object',
              required: ['key_id', 'endpoint', 'charges', 'credits'],
              properties: { key_id: { type: 'string' }, endpoint: { type: 'string' }, charges: { type: 'integer' }, credits: { type: 'integer' } },
            },
          },
        },
      },
      'The span by key and endpoint as CSV: key_id, endpoint, charges, credits.',
    ),
    404: errorResponse('No account has this id.'),
    ...adminErrorResponses,
  },
} as const;

function byKeyCsv(rows: AccountUsageRow[]): string {
  return `${['key_id,endpoint,charges,credits', ...rows.map((row) => `${row.keyId},${row.endpoint},${row.charges},${row.credits}`)].join('\n')}\n`;
}

export function accountUsageRoute(app: FastifyInstance, services: Services, hooks: RouteHooks): void {
  app.get('/admin/accounts/:id/usage', { schema, ...hooks }, async (request, reply) => {
    const account = await existingAccount(services.store, (request.params as { id: string }).id);
    const span = usageSpan(request.query as { from?: string; to?: string; bucket: UsageBucket });
    const byKey = await services.store.ledger.accountUsage(account.id, span.from, span.to);
    if (wantsCsv(request.headers.accept)) return reply.type('text/csv; charset=utf-8').send(byKeyCsv(byKey));
    const series = await services.store.ledger.usage({ accountId: account.id, ...span });
    return {
      series,
      totals: usageTotalsOf(series),
      by_key: byKey.map((row) => ({ key_id: row.keyId, endpoint: row.endpoint, charges: row.charges, credits: row.credits })),
    };
  });
}
