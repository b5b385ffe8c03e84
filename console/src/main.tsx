import 'uplot/dist/uPlot.min.css';
import '../../web/src/styles.css';
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AdminApi } from './api.js';
import { Layout } from './components/layout.js';
import { AccountPage } from './pages/account.js';
import { AccountsPage } from './pages/accounts.js';
import { AuditLogPage } from './pages/audit-log.js';
import { DocumentsPage } from './pages/documents.js';
import { KeyPage } from './pages/key.js';
import { KeysPage } from './pages/keys.js';
import { OverviewPage } from './pages/overview.js';
import { SearchPage } from './pages/search.js';
import { SearchSettingsPage } from './pages/search-settings.js';
import { SignInPage } from './pages/sign-in.js';
import { type Route, useRoute } from './router.js';
import { type Can, canOf, type Session, savedSession, saveSession } from './session.js';

const TITLES: Record<Route['page'], string> = {
  overview: 'Overview',
  accounts: 'Accounts',
  account: 'Account',
  keys: 'Keys',
  key: 'Key',
  documents: 'Documents',
  search: 'Search',
  'search-settings': 'Search settings',
  'audit-log': 'Audit log',
  'not-found': 'Not found',
};

function App() {
  const [session, setSession] = useState<Session | null>(savedSession);
  const [notice, setNotice] = useState<string>();
  const route = useRoute();
  const signOut = (message?: string) => {
    saveSession(null);
    setSession(null);
    setNotice(message);
  };
  const api = useMemo(() => session && new AdminApi(session.token, (message) => signOut(`Signed out: ${message}`)), [session]);

  // A new page: its title, and (after the first) focus on its heading so that a screen reader
  // announces it. On load the focus stays at the top, where the skip link is.
  const loaded = useRef(false);
  useEffect(() => {
    document.title = `${TITLES[route.page]} · metered-search console`;
    if (loaded.current) requestAnimationFrame(() => document.querySelector<HTMLElement>('main h1')?.focus());
    loaded.current = true;
  }, [route, session]);

  if (!session || !api) {
    return (
      <SignInPage
        notice={notice}
        onSignedIn={(signedIn) => {
          saveSession(signedIn);
          setNotice(undefined);
          setSession(signedIn);
        }}
      />
    );
  }
  return (
    <Layout route={route} session={session} onSignOut={() => signOut()}>
      <Page route={route} api={api} can={canOf(session)} />
    </Layout>
  );
}

function Page({ route, api, can }: { route: Route; api: AdminApi; can: Can }) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage api={api} />;
    case 'accounts':
      return <AccountsPage api={api} can={can} />;
    case 'account':
      return <AccountPage key={route.accountId} api={api} accountId={route.accountId} can={can} />;
    case 'keys':
      return <KeysPage api={api} can={can} />;
    case 'key':
      return <KeyPage key={route.keyId} api={api} keyId={route.keyId} can={can} />;
    case 'documents':
      return <DocumentsPage api={api} can={can} />;
    case 'search':
      return <SearchPage api={api} />;
    case 'search-settings':
      return <SearchSettingsPage api={api} can={can} />;
    case 'audit-log':
      return <AuditLogPage api={api} />;
    default:
      return <h1 tabIndex={-1}>No such page</h1>;
  }
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
