/** Base64 alphabets accepted for images: standard or URL-safe, padding optional, whitespace ignored. */
const BASE64_BODY = /^[A-Za-z0-9+/_-]*={0,2}$/;
const WHITESPACE = /\s+/g;

export type DecodedImage = { ok: true; base64: string; bytes: number } | { ok: false; reason: string };

/** Validates base64 without decoding it, and returns it in standard padded form with its decoded size. */
export function normaliseBase64(input: string): DecodedImage {
  const compact = input.replace(WHITESPACE, '');
  if (compact.length === 0) return { ok: false, reason: 'is empty' };
  if (!BASE64_BODY.test(compact)) return { ok: false, reason: 'is not valid base64 (allowed: A-Z a-z 0-9 + / - _ and = padding)' };
  const unpadded = compact.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return { ok: false, reason: 'is not valid base64 (its length is impossible for base64)' };
  if (compact.length !== unpadded.length && compact.length % 4 !== 0) {
    return { ok: false, reason: 'is not valid base64 (wrong padding)' };
  }
  const standard = unpadded.replaceAll('-', '+').replaceAll('_', '/');
  const padded = standard + '='.repeat((4 - (standard.length % 4)) % 4);
  return { ok: true, base64: padded, bytes: Math.floor((unpadded.length * 3) / 4) };
}
