const numbers = new Intl.NumberFormat('en');

export const formatNumber = (value: number): string => numbers.format(value);

/** Times in UTC, as the API gives them, to the second: "2026-11-27 08:20:15 UTC". */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** Hex for Idempotency-Key headers: getRandomValues works without HTTPS, randomUUID does not. */
export function randomHex(bytes = 16): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}
