/** Who is signed in: kept in sessionStorage, so the token is gone when the browser tab closes. */
export interface Session {
  token: string;
  name: string;
  readOnly: boolean;
  /** What the token may do (GET /admin/token); each admin route needs one of them. */
  scopes: string[];
}

/** Whether the signed-in token has `scope`: what it cannot do, the console does not offer. */
export type Can = (scope: string) => boolean;

export function canOf(session: Session): Can {
  // A session saved before scopes were read: a read-only token had every :read scope, another all.
  return (scope) => (Array.isArray(session.scopes) ? session.scopes.includes(scope) : !session.readOnly || scope.endsWith(':read'));
}

const STORAGE_KEY = 'metered-search.console.session';

export function savedSession(): Session | null {
  const raw = sessionStorage.getItem(STORAGE_KEY);
  if (raw === null) return null;
  try {
    return JSON.parse(raw) as Session;
  } catch {
    return null;
  }
}

export function saveSession(session: Session | null): void {
  if (session === null) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}
