import type { UsageBucket, UsageRow } from '../billing/ledger.js';
import { ApiError } from '../errors.js';

const DAY_MS = 86_400_000;
/** The longest span a request may ask for, by bucket: at most about 750 buckets. */
const MAX_SPAN_DAYS: Record<UsageBucket, number> = { hour: 31, day: 731 };

export const usageQuerystring = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', format: 'date-time', description: 'Start, inclusive (RFC 3339); default: 30 days before `to`.' },
    to: { type: 'string', format: 'date-time', description: 'End, exclusive (RFC 3339); default: now, the charges made this millisecond included.' },
    bucket: { type: 'string', enum: ['hour', 'day'], default: 'day' },
  },
} as const;

export const usageSeries = {
  type: 'array',
  items: {
    type: 'object',
    required: ['start', 'endpoint', 'status', 'count', 'credits'],
    properties: {
      start: { type: 'string', format: 'date-time' },
      endpoint: { type: 'string' },
      status: { type: ['integer', 'null'], description: 'The HTTP status the charged requests ended with; null while not known.' },
      count: { type: 'integer' },
      credits: { type: 'integer', description: 'The credits those charges took: their prices.' },
    },
  },
} as const;

export const usageTotals = {
  type: 'object',
  required: ['count', 'credits', 'by_endpoint'],
  properties: {
    count: { type: 'integer' },
    credits: { type: 'integer' },
    by_endpoint: { type: 'object', additionalProperties: { type: 'integer' } },
  },
} as const;

export interface UsageSpan {
  from: string;
  to: string;
  bucket: UsageBucket;
}

/** The times a span may name: from 1970 to the end of 9999, which both stores keep. */
const EARLIEST = Date.parse('1970-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

function timeOf(name: 'from' | 'to', value: string): number {
  const time = Date.parse(value);
  if (!(time >= EARLIEST && time <= LATEST)) {
    throw new ApiError('BAD_REQUEST', `\`${name}\` must be a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z; it is ${value}.`);
  }
  return time;
}

/** The span asked for, in UTC; 400 when it is backwards, out of 1970-9999, or longer than its bucket allows. */
export function usageSpan(query: { from?: string; to?: string; bucket: UsageBucket }): UsageSpan {
  // By default up to now, this millisecond included: a charge made just before the request counts.
  const to = query.to === undefined ? Date.now() + 1 : timeOf('to', query.to);
  const from = query.from === undefined ? Math.max(EARLIEST, to - 30 * DAY_MS) : timeOf('from', query.from);
  if (from >= to) throw new ApiError('BAD_REQUEST', '`from` must be before `to`.');
  if (to - from > MAX_SPAN_DAYS[query.bucket] * DAY_MS) {
    throw new ApiError('BAD_REQUEST', `With ${query.bucket} buckets a span is at most ${MAX_SPAN_DAYS[query.bucket]} days.`);
  }
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucket: query.bucket };
}

export function usageTotalsOf(series: UsageRow[]): { count: number; credits: number; by_endpoint: Record<string, number> } {
  const byEndpoint: Record<string, number> = {};
  for (const row of series) byEndpoint[row.endpoint] = (byEndpoint[row.endpoint] ?? 0) + row.count;
  return {
    count: series.reduce((sum, row) => sum + row.count, 0),
    credits: series.reduce((sum, row) => sum + row.credits, 0),
    by_endpoint: byEndpoint,
  };
}

/** The series as CSV: a header line, then one line a row. */
export function usageCsv(series: UsageRow[]): string {
  const lines = series.map((row) => `${row.start},${JSON.stringify(row.endpoint)},${row.status ?? ''},${row.count},${row.credits}`);
  return `start,endpoint,status,count,credits\n${lines.map((line) => `${line}\n`).join('')}`;
}

export function wantsCsv(accept: string | undefined): boolean {
  return /\btext\/csv\b/i.test(accept ?? '');
}

/** A usage route's 200, as JSON or, asked with Accept: text/csv, as CSV: both in the document. */
export function jsonOrCsv<Schema extends { description: string; headers: object }>(response: Schema, csv: string) {
  const { description, headers, ...schema } = response;
  return {
    description,
    headers,
    content: { 'application/json': { schema }, 'text/csv': { schema: { type: 'string', description: csv } } },
  } as const;
}
