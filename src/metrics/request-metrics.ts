import type { Metric, Registry } from 'prom-client';

const REQUESTS = 'metered_search_http_requests_total';
const LATENCY = 'metered_search_http_request_duration_seconds';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Latency {
  /** Requests per bucket, not cumulative: the upper bounds are BUCKETS, the last slot +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * A metric as prom-client's registry reads it at a scrape (Registry.getMetricsAsString calls `get`):
 * not one of prom-client's classes, whose type asks for their whole interface.
 */
interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Array<Record<string, unknown>> }>;
}

const asMetric = (metric: ScrapedMetric) => metric as unknown as Metric;

/**
 * Requests by route, method and status, and their latency by route. Counted in plain numbers on
 * the request path, which prom-client's labelled counter and histogram made 8-10% slower
 * (bench:api); turned into the Prometheus counter and histogram only when a scrape reads them.
 */
export class RequestMetrics {
  private readonly counts = new Map<string, { labels: { route: string; method: string; status: string }; count: number }>();
  private readonly latencies = new Map<string, Latency>();

  constructor(registry: Registry) {
    const requests = this.scraped(REQUESTS, 'HTTP requests answered, by route, method and status.', 'counter', () => this.requestValues());
    registry.registerMetric(asMetric(requests));
    registry.registerMetric(asMetric(this.scraped(LATENCY, 'Time to answer a request, by route.', 'histogram', () => this.latencyValues())));
  }

  /**
   * A recorder for one route and method, its series looked up once: per request what is left is a
   * lookup by status and a few additions.
   */
  recorderFor(route: string, method: string): (status: number, seconds: number) => void {
    let latency = this.latencies.get(route);
    if (!latency) {
      latency = { buckets: new Array<number>(BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
      this.latencies.set(route, latency);
    }
    const timing = latency;
    const byStatus = new Map<number, { count: number }>();
    return (status, seconds) => {
      let series = byStatus.get(status);
      if (!series) {
        series = this.series(route, method, status);
        byStatus.set(status, series);
      }
      series.count++;
      let slot = 0;
      while (slot < BUCKETS.length && seconds > (BUCKETS[slot] as number)) slot++;
      timing.buckets[slot] = (timing.buckets[slot] as number) + 1;
      timing.sum += seconds;
      timing.count++;
    };
  }

  private series(route: string, method: string, status: number): { count: number } {
    const key = `${route} ${method} ${status}`;
    let series = this.counts.get(key);
    if (!series) {
      series = { labels: { route, method, status: String(status) }, count: 0 };
      this.counts.set(key, series);
    }
    return series;
  }

  private requestValues(): Array<Record<string, unknown>> {
    return [...this.counts.values()].map((series) => ({ labels: series.labels, value: series.count }));
  }

  /** Cumulative buckets, then the sum and the count, per route: the Prometheus histogram. */
  private latencyValues(): Array<Record<string, unknown>> {
    return [...this.latencies].flatMap(([route, latency]) => {
      let cumulative = 0;
      const buckets = latency.buckets.map((inBucket, slot) => {
        cumulative += inBucket;
        return { metricName: `${LATENCY}_bucket`, labels: { route, le: slot < BUCKETS.length ? BUCKETS[slot] : '+Inf' }, value: cumulative };
      });
      return [
        ...buckets,
        { metricName: `${LATENCY}_sum`, labels: { route }, value: latency.sum },
        { metricName: `${LATENCY}_count`, labels: { route }, value: latency.count },
      ];
    });
  }

  private scraped(name: string, help: string, type: 'counter' | 'histogram', values: () => Array<Record<string, unknown>>): ScrapedMetric {
    return { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }) };
  }
}
