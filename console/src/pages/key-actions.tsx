import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../../../web/src/components/confirm.js';
import { ShownOnce } from '../../../web/src/components/secret.js';
import { formatNumber, formatTime, randomHex } from '../../../web/src/format.js';
import { useAction } from '../../../web/src/hooks.js';
import type { AdminApi, AdminGetKeyResponse } from '../api.js';
import { Outcome } from '../components/outcome.js';
import type { Can } from '../session.js';

type Key = AdminGetKeyResponse;

interface ActionsProps {
  api: AdminApi;
  keyRecord: Key;
  can: Can;
  onChanged: () => void;
}

/** Top up, disable or enable, revoke, roll: each says what it did or what the API refused. */
export function KeyActions({ api, keyRecord, can, onChanged }: ActionsProps) {
  return (
    <section class="panel" aria-labelledby="key-actions">
      <h2 id="key-actions">Actions</h2>
      {keyRecord.status === 'revoked' ? (
        <p>This key is revoked: nothing more can be done with it.</p>
      ) : (
        <div class="action-grid">
          {can('credits:write') && <TopUp grant={(input, attempt) => api.topUp(keyRecord.id, input, attempt)} onChanged={onChanged} />}
          {can('keys:write') && <StatusChange api={api} keyRecord={keyRecord} onChanged={onChanged} />}
          {can('keys:write') && <Roll api={api} keyRecord={keyRecord} onChanged={onChanged} />}
          {can('keys:write') && <SpendCaps api={api} keyRecord={keyRecord} onChanged={onChanged} />}
        </div>
      )}
    </section>
  );
}

type Grant = (input: { credits: number; expires_at?: string }, idempotencyKey: string) => Promise<{ balance: number }>;

/** Adds credits, to a key's account or to an account. */
export function TopUp({ grant, onChanged }: { grant: Grant; onChanged: () => void }) {
  const action = useAction();
  // One Idempotency-Key per top-up the operator means: a second click while the first is in flight is the same top-up.
  const [attempt, setAttempt] = useState(randomHex);
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const expires = String(form.get('expires') ?? '');
    const ok = await action.run(async () => {
      const credits = Number(form.get('credits'));
      const answer = await grant({ credits, ...(expires ? { expires_at: new Date(`${expires}T00:00:00Z`).toISOString() } : {}) }, attempt);
      return `Added ${formatNumber(credits)} credits${expires ? ` that expire on ${expires}` : ''}: the balance is ${formatNumber(answer.balance)}.`;
    });
    if (ok) {
      formElement.reset();
      setAttempt(randomHex());
      onChanged();
    }
  };
  return (
    <form class="stacked" onSubmit={submit} aria-labelledby="top-up">
      <h3 id="top-up">Top up</h3>
      <label>
        Credits
        <input name="credits" type="number" required min={1} step={1} inputMode="numeric" />
      </label>
      <label>
        <span>
          Expires <span class="subtle">(optional; 00:00 UTC that day)</span>
        </span>
        <input name="expires" type="date" />
      </label>
      <button type="submit" class="primary" disabled={action.busy}>
        Top up
      </button>
      <Outcome action={action} />
    </form>
  );
}

function StatusChange({ api, keyRecord, onChanged }: Omit<ActionsProps, 'can'>) {
  const action = useAction();
  const [confirming, setConfirming] = useState<'disable' | 'revoke'>();
  const change = async (verb: 'disable' | 'enable' | 'revoke') => {
    setConfirming(undefined);
    const ok = await action.run(async () => {
      const answer = await api.changeStatus(keyRecord.id, verb);
      return `The key is ${answer.status}.`;
    });
    if (ok) onChanged();
  };
  return (
    <div class="stacked" role="group" aria-labelledby="key-status">
      <h3 id="key-status">Status</h3>
      <p>
        Now <span class={`badge ${keyRecord.status}`}>{keyRecord.status}</span>
      </p>
      {keyRecord.status === 'active' ? (
        <button type="button" onClick={() => setConfirming('disable')} disabled={action.busy}>
          Disable
        </button>
      ) : (
        <button type="button" onClick={() => change('enable')} disabled={action.busy}>
          Enable
        </button>
      )}
      <button type="button" class="danger" onClick={() => setConfirming('revoke')} disabled={action.busy}>
        Revoke
      </button>
      <Outcome action={action} />
      {confirming && (
        <ConfirmDialog
          title={confirming === 'revoke' ? `Revoke "${keyRecord.name}"?` : `Disable "${keyRecord.name}"?`}
          confirmLabel={confirming === 'revoke' ? 'Revoke for good' : 'Disable'}
          danger={confirming === 'revoke'}
          onConfirm={() => change(confirming)}
          onCancel={() => setConfirming(undefined)}
        >
          {confirming === 'revoke' ? (
            <p>Its requests are refused from now on, and this cannot be undone. Its {formatNumber(keyRecord.balance)} credits stay unspent.</p>
          ) : (
            <p>Its requests are refused (403) until it is enabled again.</p>
          )}
        </ConfirmDialog>
      )}
    </div>
  );
}

function Roll({ api, keyRecord, onChanged }: Omit<ActionsProps, 'can'>) {
  const action = useAction();
  const [grace, setGrace] = useState<number>();
  const [rolled, setRolled] = useState<{ key: string; until: string | null }>();
  const roll = async (seconds: number) => {
    setGrace(undefined);
    setRolled(undefined);
    const ok = await action.run(async () => {
      const answer = await api.roll(keyRecord.id, seconds);
      setRolled({ key: answer.key, until: answer.old_key_valid_until });
      return answer.old_key_valid_until
        ? `Rolled: the former key works until ${formatTime(answer.old_key_valid_until)}.`
        : 'Rolled: the former key no longer works.';
    });
    if (ok) onChanged();
  };
  const submit = (event: Event) => {
    event.preventDefault();
    setGrace(Number(new FormData(event.currentTarget as HTMLFormElement).get('grace')) * 60);
  };
  return (
    <form class="stacked" onSubmit={submit} aria-labelledby="roll">
      <h3 id="roll">Roll the key</h3>
      <label>
        Former key keeps working for (minutes)
        <input name="grace" type="number" required min={0} max={10080} step={1} defaultValue="60" inputMode="numeric" />
      </label>
      <button type="submit" disabled={action.busy}>
        Roll
      </button>
      <Outcome action={action} />
      {rolled && <ShownOnce label={`The new key for "${keyRecord.name}"`} secret={rolled.key} />}
      {grace !== undefined && (
        <ConfirmDialog title={`Roll "${keyRecord.name}"?`} confirmLabel="Roll" onConfirm={() => roll(grace)} onCancel={() => setGrace(undefined)}>
          <p>
            A new plain key replaces the current one; the current one works for {formatNumber(grace / 60)} more minutes. The balance and history stay
            with the key.
          </p>
        </ConfirmDialog>
      )}
    </form>
  );
}

const CAP_FIELDS = [
  { interval: 'day', label: 'Credits a day' },
  { interval: 'week', label: 'Credits a week' },
  { interval: 'month', label: 'Credits a month' },
] as const;

/** A key's spend caps. */
function SpendCaps({ api, keyRecord, onChanged }: Omit<ActionsProps, 'can'>) {
  return (
    <CapsForm
      caps={keyRecord.spend_caps}
      headingId="key-caps"
      onChanged={onChanged}
      save={(caps) => api.updateKey(keyRecord.id, { spend_caps: caps })}
    />
  );
}

type Caps = Array<{ credits: number; interval: 'day' | 'week' | 'month' }> | null;

/** At most so many credits a UTC day, ISO week or calendar month; empty fields mean no cap. */
export function CapsForm({
  caps,
  headingId,
  save,
  onChanged,
}: {
  caps: Array<{ credits: number; interval: string }> | null;
  headingId: string;
  save: (caps: Caps) => Promise<unknown>;
  onChanged: () => void;
}) {
  const action = useAction();
  const current = (interval: string) => caps?.find((cap) => cap.interval === interval)?.credits;
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const chosen = CAP_FIELDS.flatMap(({ interval }) => {
      const value = String(form.get(interval) ?? '').trim();
      return value === '' ? [] : [{ credits: Number(value), interval }];
    });
    const ok = await action.run(async () => {
      await save(chosen.length === 0 ? null : chosen);
      return chosen.length === 0 ? 'No spend caps now.' : 'Spend caps saved.';
    });
    if (ok) onChanged();
  };
  return (
    <form class="stacked" onSubmit={submit} aria-labelledby={headingId}>
      <h3 id={headingId}>Spend caps</h3>
      {CAP_FIELDS.map(({ interval, label }) => (
        <label key={interval}>
          {label}
          <input name={interval} type="number" min="1" step="1" defaultValue={current(interval)?.toString() ?? ''} />
        </label>
      ))}
      <button type="submit" disabled={action.busy}>
        Save caps
      </button>
      <Outcome action={action} />
    </form>
  );
}
