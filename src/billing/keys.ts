import { hash } from 'node:crypto';

/** An API key: 64 hexadecimal digits, in either case. The one definition the schemas and the CLI read. */
export const API_KEY_PATTERN_SOURCE = '^[0-9a-fA-F]{64}$';
export const API_KEY_PATTERN = new RegExp(API_KEY_PATTERN_SOURCE);

/** Hex is case-insensitive, so a key and its upper-case spelling hash alike. */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey.toLowerCase(), 'hex');
}
