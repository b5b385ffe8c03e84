import type { Clock } from '../../platform/clock.js';

/** Failed portal sign-ins an address may make in a window; past them it is refused (429) until the window ends. */
const FAILURES_PER_WINDOW = 10;
const WINDOW_MS = 60_000;
/** Addresses remembered at most: past it the oldest windows are forgotten first. */
const ADDRESSES = 100_000;

/**
 * Failed portal sign-ins (a wrong key, a former key, a used or unknown link) by client address,
 * so that keys cannot be guessed at the portal's speed. Per instance: at 10 a minute an address
 * tries a few thousand keys a day over many instances, against 2^256.
 */
export class SignInThrottle {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(private readonly clock: Clock) {}

  /** Seconds the address must wait before it may try again, or undefined when it may now. */
  retryAfter(address: string): number | undefined {
    const window = this.windows.get(address);
    if (!window) return undefined;
    const left = window.start + WINDOW_MS - this.clock();
    if (left <= 0) {
      this.windows.delete(address);
      return undefined;
    }
    return window.failures >= FAILURES_PER_WINDOW ? Math.ceil(left / 1000) : undefined;
  }

  failed(address: string): void {
    const now = this.clock();
    const window = this.windows.get(address);
    if (window && window.start + WINDOW_MS > now) {
      window.failures++;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= ADDRESSES) this.windows.delete(this.windows.keys().next().value as string);
    this.windows.set(address, { start: now, failures: 1 });
  }
}
