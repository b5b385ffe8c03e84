/** A failure the operator can fix; printed as its message, exit code 1. */
export class CliError extends Error {}

/** A rate in requests per second: a positive integer, or "default" for the service's default. */
export function parseRate(raw: string, allowDefault: boolean): number | null {
  if (allowDefault && raw.trim() === 'default') return null;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new CliError(`the rate must be an integer >= 1 (requests per second)${allowDefault ? ' or "default"' : ''}, got "${raw}"`);
  }
  return Number(raw);
}

export function parseCredits(raw: string, min: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new CliError(`--credits must be an integer >= ${min}, got "${raw}"`);
  }
  return Number(raw);
}
