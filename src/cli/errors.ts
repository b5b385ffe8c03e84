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

/** An RFC 3339 time with its offset (2027-01-31T23:59:59Z), as the admin API takes it. */
export function parseTime(raw: string, option: string): string {
  const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;
  if (!rfc3339.test(raw.trim()) || Number.isNaN(Date.parse(raw))) {
    throw new CliError(`${option} must be an RFC 3339 time such as 2027-01-31T23:59:59Z, got "${raw}"`);
  }
  return raw.trim();
}

export function notFound(keyOrId: string): CliError {
  return new CliError(`No key matches "${keyOrId}" (give the plain key or its id, see "keys list").`);
}
