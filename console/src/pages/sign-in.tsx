import { useState } from 'preact/hooks';
import { AdminApi } from '../api.js';
import type { Session } from '../session.js';

/** Sign in with an admin token (`npx metered-search admin tokens create --name NAME`). */
export function SignInPage({ onSignedIn, notice }: { onSignedIn: (session: Session) => void; notice: string | undefined }) {
  const [error, setError] = useState<string | undefined>(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const token = String(new FormData(event.currentTarget as HTMLFormElement).get('token') ?? '').trim();
    setBusy(true);
    setError(undefined);
    try {
      const current = await new AdminApi(token).currentToken();
      onSignedIn({ token, name: current.name, readOnly: current.read_only, scopes: current.scopes });
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <form onSubmit={submit} class="panel" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">metered-search console</h1>
        <p>
          Sign in with an admin token. Create one on the server with <code>npx metered-search admin tokens create --name NAME</code> (add{' '}
          <code>--read-only</code> for a token that can only look, or <code>--scopes</code> for some things only).
        </p>
        <label>
          Admin token
          <input name="token" type="password" required autoComplete="off" spellcheck={false} placeholder="msadmin_…" aria-describedby="token-note" />
        </label>
        <p id="token-note" class="hint">
          Kept in this browser tab only, until you sign out or close it.
        </p>
        {error && (
          <p class="outcome error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
