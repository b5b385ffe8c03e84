import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret as Standard Webhooks writes them: whsec_ and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/** Whether a secret is whsec_ and base64 of at least 16 bytes (WEBHOOK_SECRET is checked with it). */
export function isWebhookSecret(secret: string): boolean {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  return /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && Buffer.from(encoded, 'base64').length >= 16;
}

/**
 * The webhook-signature header of the Standard Webhooks specification: `v1,` and the base64
 * HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>", keyed with the secret's bytes (the
 * base64 after whsec_).
 */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
