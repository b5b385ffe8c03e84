import { useMemo, useState } from 'preact/hooks';
import { ChargesTable } from '../../web/src/components/charges-table.js';
import { ConfirmDialog } from '../../web/src/components/confirm.js';
import { ShownOnce } from '../../web/src/components/secret.js';
import { UsageChart } from '../../web/src/components/usage-chart.js';
import { UsageByKeyTable } from '../../web/src/components/usage-table.js';
import { formatNumber, formatTime } from '../../web/src/format.js';
import { useAction } from '../../web/src/hooks.js';
import type { AccountView, PortalApi } from './api.js';

const DAY_MS = 86_400_000;

interface Props {
  api: PortalApi;
  view: AccountView;
  reload: () => Promise<void>;
  /** A key was rolled to this new plain key. */
  onKeyRolled: (keyId: string, key: string) => Promise<void>;
}

/** The account: balance, usage, keys (named and rolled here), charges, and buying credits. */
export function Dashboard({ api, view, reload, onKeyRolled }: Props) {
  const { account, usage } = view;
  const times = useMemo(() => {
    const from = Date.parse(usage.from);
    return Array.from({ length: Math.round((Date.parse(usage.to) - from) / DAY_MS) }, (_, index) => from + index * DAY_MS);
  }, [usage.from, usage.to]);
  const today = new Date().toISOString().slice(0, 10);
  const todays = usage.series.filter((row) => row.start.startsWith(today)).reduce((sum, row) => sum + row.count, 0);
  const names = new Map(view.keys.map((key) => [key.id, key.name || key.id]));
  return (
    <>
      {location.hash === '#bought' && (
        <p class="outcome ok" role="status">
          Thank you: your credits arrive as soon as the payment is confirmed.
        </p>
      )}
      <div class="page-head">
        <h1 tabIndex={-1}>{account.name || 'Your account'}</h1>
        <button type="button" onClick={() => void reload()}>
          Refresh
        </button>
      </div>
      <section class="tiles" aria-label="Your account">
        <div class="tile">
          <span class="tile-label">Balance</span>
          <span class="tile-value" data-testid="portal-balance">
            {formatNumber(account.balance)}
          </span>
          <span class="tile-note">credits, shared by all your keys</span>
        </div>
        <div class="tile">
          <span class="tile-label">Requests today</span>
          <span class="tile-value small" data-testid="portal-today">
            {formatNumber(todays)}
          </span>
        </div>
        <div class="tile">
          <span class="tile-label">Expiring credits</span>
          <span class="tile-value small">
            {account.expiring.length === 0
              ? 'none'
              : account.expiring.map((grant) => `${formatNumber(grant.credits)} on ${grant.at.slice(0, 10)}`).join(', ')}
          </span>
        </div>
      </section>
      <Buy api={api} view={view} />
      <section class="panel" aria-labelledby="usage">
        <h2 id="usage">Usage, last 30 days</h2>
        <UsageChart times={times} series={usage.series} bucket="day" />
        <h3>By key and endpoint</h3>
        {usage.by_key.length === 0 ? (
          <p>No charges in the last 30 days.</p>
        ) : (
          <UsageByKeyTable rows={usage.by_key} names={names} testId="portal-usage" />
        )}
      </section>
      <Keys api={api} view={view} reload={reload} onKeyRolled={onKeyRolled} />
      <Charges view={view} names={names} />
    </>
  );
}

function Buy({ api, view }: { api: PortalApi; view: AccountView }) {
  const action = useAction();
  const buy = (packId: string) =>
    action.run(async () => {
      const { url } = await api.checkout(packId);
      location.assign(url);
      return 'Opening the payment page…';
    });
  return (
    <section class="panel" id="buy" aria-labelledby="buy-credits">
      <h2 id="buy-credits">Buy credits</h2>
      <p>{view.how_to_buy}</p>
      {view.packs.length > 0 && (
        <div class="action-row">
          {view.packs.map((pack) => (
            <button key={pack.id} type="button" class="primary" disabled={action.busy} onClick={() => void buy(pack.id)}>
              Buy {pack.label}
            </button>
          ))}
        </div>
      )}
      {action.outcome && !action.outcome.ok && (
        <p class="outcome error" role="alert">
          {action.outcome.message}
        </p>
      )}
    </section>
  );
}

function Keys({ api, view, reload, onKeyRolled }: Props) {
  const [rolling, setRolling] = useState<{ id: string; name: string }>();
  const [rolled, setRolled] = useState<{ name: string; key: string; until: string | null }>();
  const [message, setMessage] = useState<{ ok: boolean; text: string }>();
  const [grace, setGrace] = useState(3600);
  const rename = async (event: Event, keyId: string) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name') ?? '').trim();
    try {
      await api.rename(keyId, name);
      setMessage({ ok: true, text: `Named "${name}".` });
      await reload();
    } catch (error) {
      setMessage({ ok: false, text: (error as Error).message });
    }
  };
  // Signed in with a key, only that key may be changed; a portal link session changes any.
  const changeable = (keyId: string) => view.signed_in_with === 'session' || view.signed_in_key_id === keyId;
  const roll = async () => {
    if (!rolling) return;
    const target = rolling;
    setRolling(undefined);
    try {
      const answer = await api.roll(target.id, grace);
      setRolled({ name: target.name, key: answer.key, until: answer.old_key_valid_until });
      await onKeyRolled(target.id, answer.key);
    } catch (error) {
      setMessage({ ok: false, text: (error as Error).message });
    }
  };
  return (
    <section class="panel" aria-labelledby="keys">
      <h2 id="keys">Your keys</h2>
      {message && (
        <p class={message.ok ? 'outcome ok' : 'outcome error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      )}
      {rolled && (
        <>
          <ShownOnce label={`The new key for "${rolled.name}"`} secret={rolled.key} />
          <p>{rolled.until ? `The former key keeps working until ${formatTime(rolled.until)}.` : 'The former key no longer works.'}</p>
        </>
      )}
      <div class="table-scroll">
        <table class="keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col" class="wide-only">
                Created
              </th>
              <th scope="col">Last used</th>
              <th scope="col" class="wide-only">
                Works until
              </th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {view.keys.map((key) => (
              <tr key={key.id}>
                <td>
                  {key.name || key.id}
                  <div class="mono subtle">{key.id}</div>
                  {key.status !== 'active' && <span class={`badge ${key.status}`}>{key.status}</span>}
                </td>
                <td class="wide-only">{formatTime(key.created_at)}</td>
                <td>{formatTime(key.last_used_at)}</td>
                <td class="wide-only">{key.expires_at ? formatTime(key.expires_at) : 'no end'}</td>
                <td>
                  {key.status !== 'revoked' && !changeable(key.id) && (
                    <span class="subtle">Sign in with this key, or through your provider's website, to change it.</span>
                  )}
                  {key.status !== 'revoked' && changeable(key.id) && (
                    <>
                      <form class="inline-form" onSubmit={(event) => void rename(event, key.id)}>
                        <label>
                          New name for {key.name || key.id}
                          <input name="name" required maxLength={200} autoComplete="off" />
                        </label>
                        <button type="submit">Rename</button>
                      </form>
                      <button type="button" onClick={() => setRolling({ id: key.id, name: key.name || key.id })}>
                        Roll {key.name || key.id}
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rolling && (
        <ConfirmDialog title={`Roll "${rolling.name}"?`} confirmLabel="Roll" onConfirm={() => void roll()} onCancel={() => setRolling(undefined)}>
          <p>A new key replaces this one, shown once. The balance and history stay with it.</p>
          <label>
            The current key keeps working for
            <select value={grace} onChange={(event) => setGrace(Number((event.target as HTMLSelectElement).value))}>
              <option value={0}>no time: it stops now</option>
              <option value={3600}>an hour</option>
              <option value={86_400}>a day</option>
              <option value={604_800}>a week</option>
            </select>
          </label>
        </ConfirmDialog>
      )}
    </section>
  );
}

function Charges({ view, names }: { view: AccountView; names: Map<string, string> }) {
  return (
    <section class="panel" aria-labelledby="charges">
      <h2 id="charges">Latest charges</h2>
      {view.charges.length === 0 ? <p>No charges yet.</p> : <ChargesTable charges={view.charges} names={names} />}
    </section>
  );
}
