import { useState } from 'preact/hooks';
import { ShownOnce } from '../../../web/src/components/secret.js';
import { SpanSelect, UsageChart, useSpan } from '../../../web/src/components/usage-chart.js';
import { UsageByKeyTable } from '../../../web/src/components/usage-table.js';
import { formatNumber, formatTime } from '../../../web/src/format.js';
import { useAction, useLoad } from '../../../web/src/hooks.js';
import type { AdminApi, AdminGetAccountResponse } from '../api.js';
import { LoadError, Outcome } from '../components/outcome.js';
import { hrefOf } from '../router.js';
import type { Can } from '../session.js';
import { CapsForm, TopUp } from './key-actions.js';

type Account = AdminGetAccountResponse;

/** One account: its balance, caps, metadata, keys and usage, and what a token with the scopes may change. */
export function AccountPage({ api, accountId, can }: { api: AdminApi; accountId: string; can: Can }) {
  const account = useLoad(() => api.getAccount(accountId), [accountId]);
  const [round, setRound] = useState(0);
  const changed = () => {
    account.reload();
    setRound((value) => value + 1);
  };
  const record = account.data;
  return (
    <>
      <p class="breadcrumb">
        <a href={hrefOf.accounts}>Accounts</a> /
      </p>
      <div class="page-head">
        <h1 tabIndex={-1}>{record ? record.name || record.id : 'Account'}</h1>
      </div>
      <LoadError message={account.error} />
      {record && (
        <>
          <section class="tiles" aria-label="This account">
            <div class="tile">
              <span class="tile-label">Balance</span>
              <span class="tile-value" data-testid="account-balance">
                {formatNumber(record.balance)}
              </span>
              <span class="tile-note">credits, shared by its keys</span>
            </div>
            <div class="tile">
              <span class="tile-label">External id</span>
              <span class="tile-value small mono">{record.external_id ?? 'none'}</span>
            </div>
            <div class="tile">
              <span class="tile-label">Spend caps</span>
              <span class="tile-value small" data-testid="account-caps">
                {record.cap_spend.length
                  ? record.cap_spend.map((cap) => `${formatNumber(cap.spent)} of ${formatNumber(cap.credits)} this ${cap.interval}`).join(', ')
                  : 'none'}
              </span>
            </div>
            <div class="tile">
              <span class="tile-label">Id</span>
              <span class="tile-value small mono">{record.id}</span>
            </div>
          </section>
          {record.metadata !== null && (
            <section class="panel" aria-labelledby="account-metadata">
              <h2 id="account-metadata">Metadata</h2>
              <pre class="mono metadata">{JSON.stringify(record.metadata, null, 2)}</pre>
            </section>
          )}
          {(can('credits:write') || can('accounts:write') || can('keys:write')) && (
            <section class="panel" aria-labelledby="account-actions">
              <h2 id="account-actions">Actions</h2>
              <div class="action-grid">
                {can('credits:write') && <TopUp grant={(input, attempt) => api.topUpAccount(record.id, input, attempt)} onChanged={changed} />}
                {can('accounts:write') && (
                  <CapsForm
                    caps={record.spend_caps}
                    headingId="account-caps-form"
                    onChanged={changed}
                    save={(caps) => api.updateAccount(record.id, { spend_caps: caps })}
                  />
                )}
                {can('keys:write') && <NewKey api={api} accountId={record.id} onChanged={changed} />}
              </div>
            </section>
          )}
          <Keys account={record} />
          <AccountUsage api={api} account={record} round={round} />
        </>
      )}
    </>
  );
}

function NewKey({ api, accountId, onChanged }: { api: AdminApi; accountId: string; onChanged: () => void }) {
  const action = useAction();
  const [created, setCreated] = useState<{ key: string; name: string }>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(formElement).get('name') ?? '').trim();
    setCreated(undefined);
    const ok = await action.run(async () => {
      const answer = await api.createAccountKey(accountId, { name });
      setCreated({ key: answer.key, name: answer.name });
      return `Created key "${answer.name}": it spends this account's balance.`;
    });
    if (ok) {
      formElement.reset();
      onChanged();
    }
  };
  return (
    <form class="stacked" onSubmit={submit} aria-labelledby="new-account-key">
      <h3 id="new-account-key">New key</h3>
      <label>
        Name
        <input name="name" required maxLength={200} autoComplete="off" />
      </label>
      <button type="submit" class="primary" disabled={action.busy}>
        Create key
      </button>
      <Outcome action={action} />
      {created && <ShownOnce label={`The new key for "${created.name}"`} secret={created.key} />}
    </form>
  );
}

function Keys({ account }: { account: Account }) {
  return (
    <section class="panel" aria-labelledby="account-keys">
      <h2 id="account-keys">Keys</h2>
      {account.keys.length === 0 ? (
        <p>No keys yet.</p>
      ) : (
        <div class="table-scroll">
          <table class="keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" class="wide-only">
                  Works until
                </th>
                <th scope="col" class="wide-only">
                  Created
                </th>
              </tr>
            </thead>
            <tbody>
              {account.keys.map((key) => (
                <tr key={key.id}>
                  <td>
                    <a href={hrefOf.key(key.id)}>{key.name || key.id}</a>
                    <div class="mono subtle">{key.id}</div>
                  </td>
                  <td>
                    <span class={`badge ${key.status}`}>{key.status}</span>
                  </td>
                  <td class="wide-only">{key.expires_at === null ? 'no end' : formatTime(key.expires_at)}</td>
                  <td class="wide-only">{formatTime(key.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function AccountUsage({ api, account, round }: { api: AdminApi; account: Account; round: number }) {
  const { span, spanIndex, setSpanIndex, times, query } = useSpan(round);
  const usage = useLoad(() => api.accountUsage(account.id, query), [account.id, query]);
  const names = new Map(account.keys.map((key) => [key.id, key.name || key.id]));
  return (
    <section class="panel" aria-labelledby="account-usage">
      <div class="page-head">
        <h2 id="account-usage">Usage</h2>
        <SpanSelect value={spanIndex} onChange={setSpanIndex} />
      </div>
      <LoadError message={usage.error} />
      <UsageChart times={times} series={usage.data?.series} bucket={span.bucket} />
      <h3>By key and endpoint, in this span</h3>
      {!usage.data || usage.data.by_key.length === 0 ? (
        <p>No charges in this span.</p>
      ) : (
        <UsageByKeyTable rows={usage.data.by_key} names={names} testId="usage-by-key" />
      )}
    </section>
  );
}
