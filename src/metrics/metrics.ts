import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { RequestMetrics } from './request-metrics.js';

/** Why a debit took no credit, or that it took one: DebitResult's outcomes. */
export type DebitOutcome = 'charged' | 'capped' | 'no-credits' | 'inactive' | 'unknown-key';

/** Figures a scrape reads when it happens, rather than counted as they change. */
export interface MetricSources {
  /** Documents in the corpus. */
  documents?: () => Promise<number>;
  /** The PostgreSQL pool's connections: in all, idle, and requests waiting for one. */
  pool?: () => { total: number; idle: number; waiting: number };
  /** Face searches of the embedded engine admitted and not finished: running, or queued for a worker. */
  faceJobs?: () => number;
}

/** How a face search ended: FaceSearchOutcome's kinds. */
export type FaceSearchResult = 'matches' | 'rejected' | 'failed';

/**
 * What the service counts for /metrics, in the Prometheus text format. Labels are routes as
 * declared (`/admin/keys/:id`), methods, statuses and outcomes: never a key, a token or a document id.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requestCounts = new RequestMetrics(this.registry);
  private readonly debits = new Counter({
    name: 'metered_search_debits_total',
    help: 'Debits asked for, by outcome: charged, or refused (capped, no-credits, inactive, unknown-key).',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly granted = new Counter({
    name: 'metered_search_credits_granted_total',
    help: 'Credits granted through the admin API (keys created and topped up).',
    registers: [this.registry],
  });
  private readonly spent = new Counter({
    name: 'metered_search_credits_spent_total',
    help: 'Credits spent by billable requests (their prices).',
    registers: [this.registry],
  });
  private readonly expired = new Counter({
    name: 'metered_search_credits_expired_total',
    help: 'Credits that left balances unspent when their grants expired.',
    registers: [this.registry],
  });
  private readonly replays = new Counter({
    name: 'metered_search_idempotent_replays_total',
    help: 'Requests answered from the stored response of an earlier one with the same Idempotency-Key.',
    registers: [this.registry],
  });
  private readonly searchTime = new Histogram({
    name: 'metered_search_search_duration_seconds',
    help: "Time a /query's search took: analysis, ranking over the index, titles.",
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  private readonly faceTime = new Histogram({
    name: 'metered_search_face_search_duration_seconds',
    help: 'Time a face search took, waiting for a worker included, by result: matches, rejected (the image), failed.',
    labelNames: ['result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'metered_search_rate_limited_total',
    help: 'Requests refused with 429 for their key rate.',
    registers: [this.registry],
  });

  constructor(sources: MetricSources = {}) {
    collectDefaultMetrics({ register: this.registry, prefix: 'metered_search_' });
    const { documents, pool, faceJobs } = sources;
    if (faceJobs) {
      new Gauge({
        name: 'metered_search_face_jobs',
        help: 'Face searches of the embedded engine admitted and not finished: running, or queued for a worker.',
        registers: [this.registry],
        collect() {
          this.set(faceJobs());
        },
      });
    }
    if (documents) {
      new Gauge({
        name: 'metered_search_documents',
        help: 'Documents in the corpus.',
        registers: [this.registry],
        async collect() {
          this.set(await documents());
        },
      });
    }
    if (pool) {
      new Gauge({
        name: 'metered_search_postgres_connections',
        help: "The PostgreSQL pool's connections, by state (total, idle, waiting requests).",
        labelNames: ['state'],
        registers: [this.registry],
        collect() {
          const { total, idle, waiting } = pool();
          this.set({ state: 'total' }, total);
          this.set({ state: 'idle' }, idle);
          this.set({ state: 'waiting' }, waiting);
        },
      });
    }
  }

  /** Counts one route's answers for a method: plain numbers per request, read by a scrape (request-metrics.ts). */
  requests(route: string, method: string): (status: number, seconds: number) => void {
    return this.requestCounts.recorderFor(route, method);
  }

  debit(outcome: DebitOutcome): void {
    this.debits.inc({ outcome });
  }

  grant(credits: number): void {
    this.granted.inc(credits);
  }

  spend(credits: number): void {
    this.spent.inc(credits);
  }

  expire(credits: number): void {
    this.expired.inc(credits);
  }

  replay(): void {
    this.replays.inc();
  }

  search(seconds: number): void {
    this.searchTime.observe(seconds);
  }

  faceSearch(result: FaceSearchResult, seconds: number): void {
    this.faceTime.observe({ result }, seconds);
  }

  limited(): void {
    this.rateLimited.inc();
  }
}
