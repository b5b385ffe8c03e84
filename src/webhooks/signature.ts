import { createHmac, randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX as SECRET_PREFIX } from '../rules.js';

/** A new endpoint secret as Standard Webhooks writes them: whsec_ and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

export { isWebhookSecret } from '../rules.js';

/**
 * The webhook-signature header of the Standard Webhooks specification: `v1,` and the base64
 * HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>", keyed with the secret's bytes (the
 * base64 after whsec_).
 */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
