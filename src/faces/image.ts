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

/** The image formats face search accepts, as callers are told. */
export const ACCEPTED_IMAGE_FORMATS = 'JPEG, PNG or WebP';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The accepted format whose signature the image starts with, or undefined. Only these reach a
 * decoder: anything else (SVG, TIFF, HEIF...) could hold a worker for as long as it likes.
 */
export function imageFormatOf(bytes: Uint8Array): 'jpeg' | 'png' | 'webp' | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12));
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
  if (head.length >= 8 && head.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** The same for standard padded base64 (normaliseBase64's output): only its first 16 characters are decoded. */
export function imageFormatOfBase64(base64: string): ReturnType<typeof imageFormatOf> {
  return imageFormatOf(Buffer.from(base64.slice(0, 16), 'base64'));
}
