import { useEffect, useState } from 'preact/hooks';

export type Route =
  | { page: 'overview' }
  | { page: 'accounts' }
  | { page: 'account'; accountId: string }
  | { page: 'keys' }
  | { page: 'key'; keyId: string }
  | { page: 'documents' }
  | { page: 'search' }
  | { page: 'search-settings' }
  | { page: 'audit-log' }
  | { page: 'not-found' };

/** Pages live in the URL's fragment (#/keys/ID), so the service serves one file for all of them. */
export function routeOf(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/';
  if (path === '/') return { page: 'overview' };
  if (path === '/keys') return { page: 'keys' };
  if (path === '/accounts') return { page: 'accounts' };
  if (path === '/documents') return { page: 'documents' };
  if (path === '/search') return { page: 'search' };
  if (path === '/search-settings') return { page: 'search-settings' };
  if (path === '/audit-log') return { page: 'audit-log' };
  const key = /^\/keys\/([^/]+)$/.exec(path);
  const keyId = key?.[1] && decoded(key[1]);
  if (keyId) return { page: 'key', keyId };
  const account = /^\/accounts\/([^/]+)$/.exec(path);
  const accountId = account?.[1] && decoded(account[1]);
  if (accountId) return { page: 'account', accountId };
  return { page: 'not-found' };
}

/** A route segment decoded, or undefined when it is not valid percent-encoding (a hand-typed or cut URL). */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export const hrefOf = {
  overview: '#/',
  keys: '#/keys',
  accounts: '#/accounts',
  account: (accountId: string) => `#/accounts/${encodeURIComponent(accountId)}`,
  key: (keyId: string) => `#/keys/${encodeURIComponent(keyId)}`,
  documents: '#/documents',
  search: '#/search',
  searchSettings: '#/search-settings',
  auditLog: '#/audit-log',
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => routeOf(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(routeOf(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
