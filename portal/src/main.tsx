import 'uplot/dist/uPlot.min.css';
import '../../web/src/styles.css';
import './portal.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ServiceFailure } from '../../web/src/request.js';
import { type AccountView, PortalApi } from './api.js';
import { Dashboard } from './dashboard.js';

const KEY_STORAGE = 'metered-search.portal.key';

/** What a link's hash says when the portal link did not open a session. */
const LINK_MESSAGES: Record<string, string> = {
  '#link-used': 'This portal link was used already: each works once. Ask the site that sent you for a new one.',
  '#link-expired': 'This portal link expired: links work for 15 minutes. Ask the site that sent you for a new one.',
  '#link-unknown': 'This portal link is not one this service made. Ask the site that sent you for a new one.',
};

function App() {
  const [api, setApi] = useState<PortalApi | null>(null);
  const [view, setView] = useState<AccountView>();
  const [notice, setNotice] = useState<string | undefined>(LINK_MESSAGES[location.hash]);
  const [checking, setChecking] = useState(true);

  const open = async (candidate: PortalApi): Promise<boolean> => {
    try {
      setView(await candidate.account());
      setApi(candidate);
      return true;
    } catch (error) {
      if (!(error instanceof ServiceFailure) || (error.status !== 401 && error.status !== 403)) setNotice((error as Error).message);
      return false;
    }
  };

  // A session cookie (from a portal link) first, then a key kept for this tab.
  useEffect(() => {
    void (async () => {
      if (!(await open(new PortalApi(null)))) {
        const saved = sessionStorage.getItem(KEY_STORAGE);
        if (saved && !(await open(new PortalApi(saved)))) sessionStorage.removeItem(KEY_STORAGE);
      }
      setChecking(false);
    })();
  }, []);

  const signIn = async (key: string) => {
    const candidate = new PortalApi(key);
    try {
      setView(await candidate.account());
      sessionStorage.setItem(KEY_STORAGE, key);
      setApi(candidate);
      setNotice(undefined);
    } catch (error) {
      setNotice((error as Error).message);
    }
  };
  const signOut = async () => {
    if (api?.apiKey === null) await api.signOut().catch(() => undefined);
    sessionStorage.removeItem(KEY_STORAGE);
    setApi(null);
    setView(undefined);
    setNotice('Signed out.');
  };

  return (
    <>
      <header class="top">
        <span class="brand">metered-search</span>
        <span class="subtle">Your account</span>
        {api && (
          <div class="who">
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main id="main" tabIndex={-1}>
        {checking ? (
          <p class="loading">Loading your account…</p>
        ) : api && view ? (
          <Dashboard
            api={api}
            view={view}
            reload={async () => setView(await api.account())}
            onKeyRolled={async (keyId, key) => {
              // Rolling the key this tab signed in with: the tab goes on with the new one.
              if (view.signed_in_key_id !== keyId) return setView(await api.account());
              sessionStorage.setItem(KEY_STORAGE, key);
              const renewed = new PortalApi(key);
              setView(await renewed.account());
              setApi(renewed);
            }}
          />
        ) : (
          <SignIn notice={notice} onSignIn={signIn} />
        )}
      </main>
    </>
  );
}

function SignIn({ notice, onSignIn }: { notice: string | undefined; onSignIn: (key: string) => Promise<void> }) {
  const submit = async (event: Event) => {
    event.preventDefault();
    const key = String(new FormData(event.currentTarget as HTMLFormElement).get('key') ?? '').trim();
    await onSignIn(key);
  };
  return (
    <section class="panel sign-in" aria-labelledby="sign-in">
      <h1 id="sign-in" tabIndex={-1}>
        Sign in to your account
      </h1>
      {notice && (
        <p class="outcome error" role="alert">
          {notice}
        </p>
      )}
      <p>Use one of your API keys. It stays in this browser tab only, and is sent to this service alone.</p>
      <form class="stacked" onSubmit={submit}>
        <label>
          API key
          <input
            name="key"
            type="password"
            required
            autoComplete="off"
            spellcheck={false}
            pattern="[0-9a-fA-F]{64}"
            title="64 hexadecimal characters"
          />
        </label>
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
      <p class="subtle">Or open the portal link your provider's site gives you.</p>
    </section>
  );
}

const root = document.getElementById('app') as HTMLElement;
// The page's "Loading" line goes: the app renders in its place.
root.replaceChildren();
render(<App />, root);
