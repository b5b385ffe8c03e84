import { useState } from 'preact/hooks';
import { ShownOnce } from '../../../web/src/components/secret.js';
import { formatNumber, formatTime } from '../../../web/src/format.js';
import { useAction, useCursorPages, useLoad } from '../../../web/src/hooks.js';
import type { AdminApi, KeySummary } from '../api.js';
import { LoadError, Outcome } from '../components/outcome.js';
import { Pager } from '../components/pager.js';
import { hrefOf } from '../router.js';
import type { Can } from '../session.js';

const PAGE_SIZE = '25';

interface Filters {
  nameContains: string;
  status: string;
  maxBalance: string;
}

export function KeysPage({ api, can }: { api: AdminApi; can: Can }) {
  const [filters, setFilters] = useState<Filters>({ nameContains: '', status: '', maxBalance: '' });
  const pages = useCursorPages([filters]);
  const keys = useLoad(
    () =>
      api.listKeys({
        limit: PAGE_SIZE,
        cursor: pages.cursor,
        name_contains: filters.nameContains,
        status: filters.status,
        max_balance: filters.maxBalance,
      }),
    [filters, pages.cursor],
  );
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Keys</h1>
      </div>
      {can('keys:write') && <CreateKey api={api} onCreated={keys.reload} />}
      <section class="panel" aria-labelledby="find-keys">
        <h2 id="find-keys">Find keys</h2>
        <FilterForm onApply={setFilters} />
        <LoadError message={keys.error} />
        {keys.data && <KeyTable keys={keys.data.keys} />}
        <Pager label="Pages of keys" page={pages.page} nextCursor={keys.data?.next_cursor} onNext={pages.next} onPrevious={pages.previous} />
      </section>
    </>
  );
}

function FilterForm({ onApply }: { onApply: (filters: Filters) => void }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    onApply({
      nameContains: String(form.get('name_contains') ?? '').trim(),
      status: String(form.get('status') ?? ''),
      maxBalance: String(form.get('max_balance') ?? '').trim(),
    });
  };
  return (
    <form class="filters" onSubmit={submit} role="search" aria-label="Find keys">
      <label>
        Name contains
        <input name="name_contains" type="search" maxLength={200} />
      </label>
      <label>
        Status
        <select name="status">
          <option value="">Any</option>
          <option value="active">Active</option>
          <option value="disabled">Disabled</option>
          <option value="revoked">Revoked</option>
        </select>
      </label>
      <label>
        Balance at most
        <input name="max_balance" type="number" min={0} step={1} inputMode="numeric" />
      </label>
      <button type="submit">Find</button>
    </form>
  );
}

function KeyTable({ keys }: { keys: KeySummary[] }) {
  if (keys.length === 0) return <p>No key matches.</p>;
  return (
    <div class="table-scroll">
      <table class="keys">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col" class="number">
              Balance
            </th>
            <th scope="col" class="wide-only">
              Rate limit
            </th>
            <th scope="col" class="wide-only">
              Created
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>
                <a href={hrefOf.key(key.id)}>{key.name || key.id}</a>
                <div class="mono subtle">{key.id}</div>
              </td>
              <td>
                <span class={`badge ${key.status}`}>{key.status}</span>
              </td>
              <td class="number">{formatNumber(key.balance)}</td>
              <td class="wide-only">{key.rate === null ? 'default' : `${key.rate}/s`}</td>
              <td class="wide-only">{formatTime(key.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function CreateKey({ api, onCreated }: { api: AdminApi; onCreated: () => void }) {
  const action = useAction();
  const [created, setCreated] = useState<{ key: string; id: string; name: string }>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const rate = String(form.get('rate') ?? '').trim();
    setCreated(undefined);
    const ok = await action.run(async () => {
      const answer = await api.createKey({
        name: String(form.get('name') ?? '').trim(),
        credits: Number(form.get('credits')),
        ...(rate === '' ? {} : { rate: Number(rate) }),
      });
      setCreated({ key: answer.key, id: answer.id, name: answer.name });
      return `Created key "${answer.name}" with ${formatNumber(answer.balance)} credits.`;
    });
    if (ok) {
      formElement.reset();
      onCreated();
    }
  };
  return (
    <section class="panel" aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <form class="inline-form" onSubmit={submit}>
        <label>
          Name
          <input name="name" required maxLength={200} autoComplete="off" />
        </label>
        <label>
          Credits
          <input name="credits" type="number" required min={0} step={1} inputMode="numeric" />
        </label>
        <label>
          <span>
            Requests/s <span class="subtle">(optional)</span>
          </span>
          <input name="rate" type="number" min={1} step={1} inputMode="numeric" />
        </label>
        <button type="submit" class="primary" disabled={action.busy}>
          Create key
        </button>
      </form>
      <Outcome action={action} />
      {created && (
        <>
          <ShownOnce label={`The new key for "${created.name}"`} secret={created.key} />
          <p>
            <a href={hrefOf.key(created.id)}>Open its page</a>
          </p>
        </>
      )}
    </section>
  );
}
