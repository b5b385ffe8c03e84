import { createHash, randomBytes } from 'node:crypto';

/** A new secret for a portal link or session: 256 random bits. */
export const newToken = () => randomBytes(32).toString('base64url');

/** What the store keeps of a link's or session's secret, so that a read of the store opens nothing. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
