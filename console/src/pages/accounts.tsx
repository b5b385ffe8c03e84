import { useState } from 'preact/hooks';
import { formatNumber, formatTime } from '../../../web/src/format.js';
import { useAction, useCursorPages, useLoad } from '../../../web/src/hooks.js';
import type { AccountSummary, AdminApi } from '../api.js';
import { LoadError, Outcome } from '../components/outcome.js';
import { Pager } from '../components/pager.js';
import { hrefOf } from '../router.js';
import type { Can } from '../session.js';

const PAGE_SIZE = '25';

interface Filters {
  externalId: string;
  nameContains: string;
}

/** Accounts: the customers whose keys share one balance. */
export function AccountsPage({ api, can }: { api: AdminApi; can: Can }) {
  const [filters, setFilters] = useState<Filters>({ externalId: '', nameContains: '' });
  const pages = useCursorPages([filters]);
  const accounts = useLoad(
    () => api.listAccounts({ limit: PAGE_SIZE, cursor: pages.cursor, external_id: filters.externalId, name_contains: filters.nameContains }),
    [filters, pages.cursor],
  );
  const find = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setFilters({ externalId: String(form.get('external_id') ?? '').trim(), nameContains: String(form.get('name_contains') ?? '').trim() });
  };
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Accounts</h1>
      </div>
      {can('accounts:write') && <CreateAccount api={api} grants={can('credits:write')} />}
      <section class="panel" aria-labelledby="find-accounts">
        <h2 id="find-accounts">Find accounts</h2>
        <form class="filters" onSubmit={find} role="search" aria-label="Find accounts">
          <label>
            Name contains
            <input name="name_contains" type="search" maxLength={200} />
          </label>
          <label>
            External id
            <input name="external_id" type="search" maxLength={200} />
          </label>
          <button type="submit">Find</button>
        </form>
        <LoadError message={accounts.error} />
        {accounts.data && <AccountTable accounts={accounts.data.accounts} />}
        <Pager label="Pages of accounts" page={pages.page} nextCursor={accounts.data?.next_cursor} onNext={pages.next} onPrevious={pages.previous} />
      </section>
    </>
  );
}

function AccountTable({ accounts }: { accounts: AccountSummary[] }) {
  if (accounts.length === 0) return <p>No account matches.</p>;
  return (
    <div class="table-scroll">
      <table class="keys">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">External id</th>
            <th scope="col" class="number">
              Balance
            </th>
            <th scope="col" class="wide-only">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((account) => (
            <tr key={account.id}>
              <td>
                <a href={hrefOf.account(account.id)}>{account.name || account.id}</a>
                <div class="mono subtle">{account.id}</div>
              </td>
              <td class="mono">{account.external_id ?? '—'}</td>
              <td class="number">{formatNumber(account.balance)}</td>
              <td class="wide-only">{formatTime(account.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** `grants`: the token may grant credits (credits:write), so the form offers an opening balance. */
function CreateAccount({ api, grants }: { api: AdminApi; grants: boolean }) {
  const action = useAction();
  const [created, setCreated] = useState<{ id: string; name: string }>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const externalId = String(form.get('external_id') ?? '').trim();
    setCreated(undefined);
    const ok = await action.run(async () => {
      const answer = await api.createAccount({
        name: String(form.get('name') ?? '').trim(),
        credits: Number(form.get('credits') || 0),
        ...(externalId === '' ? {} : { external_id: externalId }),
      });
      setCreated({ id: answer.id, name: answer.name });
      return `Created account "${answer.name}" with ${formatNumber(answer.balance)} credits.`;
    });
    if (ok) formElement.reset();
  };
  return (
    <section class="panel" aria-labelledby="create-account">
      <h2 id="create-account">Create an account</h2>
      <form class="inline-form" onSubmit={submit}>
        <label>
          Name
          <input name="name" required maxLength={200} autoComplete="off" />
        </label>
        <label>
          <span>
            External id <span class="subtle">(optional)</span>
          </span>
          <input name="external_id" maxLength={200} autoComplete="off" />
        </label>
        {grants && (
          <label>
            Credits
            <input name="credits" type="number" min={0} step={1} inputMode="numeric" defaultValue="0" />
          </label>
        )}
        <button type="submit" class="primary" disabled={action.busy}>
          Create account
        </button>
      </form>
      <Outcome action={action} />
      {created && (
        <p>
          <a href={hrefOf.account(created.id)}>Open the page of "{created.name}"</a> to add its keys.
        </p>
      )}
    </section>
  );
}
