import type { AdminUsageResponse } from '../../src/client/api-types.js';

/** One bucket of a usage series, as the admin API and the portal answer it. */
export type UsageRow = AdminUsageResponse['series'][number];

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface Span {
  label: string;
  bucket: 'hour' | 'day';
  /** How many buckets, ending with the current one. */
  buckets: number;
}

export const SPANS: Span[] = [
  { label: 'Last 48 hours', bucket: 'hour', buckets: 48 },
  { label: 'Last 7 days', bucket: 'day', buckets: 7 },
  { label: 'Last 30 days', bucket: 'day', buckets: 30 },
  { label: 'Last 90 days', bucket: 'day', buckets: 90 },
];

/** The span's bucket starts (ms, UTC), oldest first, and the query that asks the API for it. */
export function spanQuery(span: Span, now = Date.now()) {
  const size = span.bucket === 'day' ? DAY_MS : HOUR_MS;
  const current = Math.floor(now / size) * size;
  const times = Array.from({ length: span.buckets }, (_, index) => current - (span.buckets - 1 - index) * size);
  return { times, query: { from: new Date(times[0] as number).toISOString(), bucket: span.bucket } };
}

/** Requests and credits per bucket, zero where nothing was charged. */
export function perBucket(times: number[], series: UsageRow[]): { requests: number[]; credits: number[] } {
  const index = new Map(times.map((time, position) => [time, position]));
  const requests = times.map(() => 0);
  const credits = times.map(() => 0);
  for (const row of series) {
    const position = index.get(Date.parse(row.start));
    if (position === undefined) continue;
    requests[position] = (requests[position] ?? 0) + row.count;
    credits[position] = (credits[position] ?? 0) + row.credits;
  }
  return { requests, credits };
}

/** Charged requests by endpoint and final status, most first. */
export function byEndpointAndStatus(series: UsageRow[]): Array<{ endpoint: string; status: string; count: number }> {
  const counts = new Map<string, { endpoint: string; status: string; count: number }>();
  for (const row of series) {
    const status = row.status === null ? 'not known' : String(row.status);
    const name = `${row.endpoint} ${status}`;
    const entry = counts.get(name) ?? { endpoint: row.endpoint, status, count: 0 };
    entry.count += row.count;
    counts.set(name, entry);
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || a.endpoint.localeCompare(b.endpoint));
}

/** Requests answered by route and status on the instance that answered /metrics (its Prometheus text). */
export function requestsFromMetrics(text: string): Array<{ route: string; status: string; count: number }> {
  const line = /^metered_search_http_requests_total\{([^}]*)\} ([0-9.e+]+)$/;
  const rows = new Map<string, { route: string; status: string; count: number }>();
  for (const entry of text.split('\n')) {
    const match = line.exec(entry);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((label) => [label[1], label[2]]));
    const route = labels.route ?? '';
    const status = labels.status ?? '';
    // Methods added up: GET and POST of one route count together.
    const row = rows.get(`${route} ${status}`) ?? { route, status, count: 0 };
    row.count += Number(match[2]);
    rows.set(`${route} ${status}`, row);
  }
  return [...rows.values()];
}
