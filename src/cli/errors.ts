/** A failure the operator can fix; printed as its message, exit code 1. */
export class CliError extends Error {}

export function parseCredits(raw: string, min: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new CliError(`--credits must be an integer >= ${min}, got "${raw}"`);
  }
  return Number(raw);
}
