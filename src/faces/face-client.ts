import { Pool } from 'undici';
import { CircuitBreaker } from '../platform/circuit-breaker.js';
import type { FaceAdmission, FaceSearchBackend, FaceSearchOutcome } from './face-search.js';

export interface FaceClientOptions {
  url: string;
  timeoutMs: number;
  breakerFailures: number;
  breakerCooldownMs: number;
  maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text);
    for (const field of ['message', 'error'] as const) {
      if (parsed && typeof parsed[field] === 'string' && parsed[field] !== '') return parsed[field];
    }
  } catch {
    // Not JSON: the text itself is the message.
  }
  return text.trim().slice(0, 500) || 'The face service rejected the request.';
}

/** Proxy to a downstream face service over a keep-alive connection pool. */
export class FaceClient implements FaceSearchBackend {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly breaker: CircuitBreaker;
  private readonly maxResponseBytes: number;

  constructor(private readonly options: FaceClientOptions) {
    const url = new URL(options.url);
    this.path = `${url.pathname}${url.search}`;
    this.pool = new Pool(url.origin, { connections: 128, keepAliveTimeout: 30_000, pipelining: 1 });
    this.breaker = new CircuitBreaker(options.breakerFailures, options.breakerCooldownMs);
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  admit(): FaceAdmission {
    if (this.breaker.tryAcquire()) return { admitted: true };
    const message = 'The face service is failing; face search is paused for a moment. Retry later.';
    return { admitted: false, message, retryAfterSeconds: Math.max(1, Math.ceil(this.options.breakerCooldownMs / 1000)) };
  }

  release(): void {
    this.breaker.release();
  }

  async search(body: Record<string, unknown>): Promise<FaceSearchOutcome> {
    let payload: string;
    try {
      payload = JSON.stringify(body);
    } catch (error) {
      // A fault of ours, not the downstream's: it must not count towards opening the breaker.
      this.breaker.release();
      throw error;
    }
    const outcome = await this.call(payload);
    if (outcome.kind === 'failed') this.breaker.recordFailure();
    else this.breaker.recordSuccess();
    return outcome;
  }

  private async call(payload: string): Promise<FaceSearchOutcome> {
    let status: number;
    let text: string;
    try {
      const response = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: payload,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      status = response.statusCode;
      text = await this.readCapped(response.body);
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? `did not answer within ${this.options.timeoutMs} ms` : 'could not be reached';
      return { kind: 'failed', message: `The face recognition service ${reason}.` };
    }
    if (status >= 400 && status < 500) return { kind: 'rejected', status, message: messageOf(text) };
    if (status < 200 || status >= 300) {
      return { kind: 'failed', message: `The face recognition service answered HTTP ${status}.` };
    }
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && Array.isArray(parsed.matches)) {
        const matches = parsed.matches.filter((match: unknown) => match !== null && typeof match === 'object' && !Array.isArray(match));
        if (matches.length === parsed.matches.length) return { kind: 'matches', matches };
      }
    } catch {
      // Falls through to the failure below.
    }
    return { kind: 'failed', message: 'The face recognition service sent a response that is not {"matches": [...]}.' };
  }

  private async readCapped(body: AsyncIterable<Buffer> & { destroy(error?: Error): void }): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += chunk.length;
      if (size > this.maxResponseBytes) {
        body.destroy();
        throw new Error('face service response too large');
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async ping(): Promise<number | null> {
    const started = performance.now();
    try {
      const response = await this.pool.request({
        method: 'HEAD',
        path: this.path,
        signal: AbortSignal.timeout(Math.min(this.options.timeoutMs, 2000)),
      });
      await response.body.dump();
      return Math.round((performance.now() - started) * 100) / 100;
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}
