/** Who is signed in: kept in sessionStorage, so the token is gone when the browser tab closes. */
export interface Session {
  token: string;
  name: string;
  readOnly: boolean;
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
