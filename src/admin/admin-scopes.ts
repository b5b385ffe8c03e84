/**
 * What an admin token may do: one scope per kind of thing and access. Each admin route checks its
 * one scope. A token made without scopes has them all; a read-only token every `:read` one.
 */
export const ADMIN_SCOPES = [
  'accounts:read',
  'accounts:write',
  'keys:read',
  'keys:write',
  'credits:write',
  'documents:read',
  'documents:write',
  'webhooks:read',
  'webhooks:write',
  'audit:read',
  'metrics:read',
  'portal:write',
] as const;

export type AdminScope = (typeof ADMIN_SCOPES)[number];

export const READ_SCOPES: readonly AdminScope[] = ADMIN_SCOPES.filter((scope) => scope.endsWith(':read'));

export function isAdminScope(value: string): value is AdminScope {
  return (ADMIN_SCOPES as readonly string[]).includes(value);
}

/** A token's scopes as stored: space-separated, in the order of ADMIN_SCOPES. */
export function storedScopes(scopes: readonly AdminScope[]): string {
  return ADMIN_SCOPES.filter((scope) => scopes.includes(scope)).join(' ');
}

/** Scopes as stored, back; names no longer known are dropped. */
export function scopesOf(stored: string): AdminScope[] {
  return stored.split(' ').filter(isAdminScope);
}

/** Whether a token with these scopes can change nothing. */
export function readOnlyScopes(scopes: readonly AdminScope[]): boolean {
  return scopes.every((scope) => scope.endsWith(':read'));
}
