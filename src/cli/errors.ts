import { MAX_ROLL_GRACE_SECONDS } from '../billing/key-admin.js';
import { MAX_BALANCE } from '../billing/ledger.js';

/**
 * A failure the operator can fix; printed as its message, exit code 1. `reported`: the command has
 * already printed its result (an audit's findings), so --json adds no error object to it.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly reported = false,
  ) {
    super(message);
  }
}

/** A rate in requests per second: a positive integer, or "default" for the service's default. */
export function parseRate(raw: string, allowDefault: boolean): number | null {
  if (allowDefault && raw.trim() === 'default') return null;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new CliError(`the rate must be an integer >= 1 (requests per second)${allowDefault ? ' or "default"' : ''}, got "${raw}"`);
  }
  return Number(raw);
}

/** Credits of one grant: an integer from `min` to MAX_BALANCE, the most a key may hold. */
export function parseCredits(raw: string, min: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > MAX_BALANCE) {
    throw new CliError(`--credits must be an integer from ${min} to ${MAX_BALANCE}, got "${raw}"`);
  }
  return Number(raw);
}

/** A rolled key's grace period in seconds: an integer from 0 to MAX_ROLL_GRACE_SECONDS. */
export function parseGraceSeconds(raw: string): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > MAX_ROLL_GRACE_SECONDS) {
    throw new CliError(`--grace-seconds must be an integer from 0 to ${MAX_ROLL_GRACE_SECONDS} (a week), got "${raw}"`);
  }
  return Number(raw);
}

export function notFound(keyOrId: string): CliError {
  return new CliError(`No key matches "${keyOrId}" (give the plain key or its id, see "keys list").`);
}
