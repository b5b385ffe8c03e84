import { hash, randomBytes } from 'node:crypto';

/** An API key: 64 hexadecimal digits, in either case. The one definition the schemas and the CLI read. */
export const API_KEY_PATTERN_SOURCE = '^[0-9a-fA-F]{64}$';
export const API_KEY_PATTERN = new RegExp(API_KEY_PATTERN_SOURCE);

/** A key id: `key_` and 16 hex digits, never to be mistaken for a 64-hex key. */
export const KEY_ID_PATTERN = /^key_[0-9a-f]{16}$/;

/** A new key id. */
export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/** Hex is case-insensitive, so a key and its upper-case spelling hash alike. */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey.toLowerCase(), 'hex');
}
