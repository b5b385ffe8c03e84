import { formatNumber, formatTime } from '../../../web/src/format.js';
import { useAction } from '../../../web/src/hooks.js';
import type { AdminApi, AdminGetKeyResponse } from '../api.js';
import { Outcome } from '../components/outcome.js';

interface RefillProps {
  api: AdminApi;
  keyRecord: AdminGetKeyResponse;
  readOnly: boolean;
  onChanged: () => void;
}

/** The key's refill plan, and (with a token that may write) a form to set or end it. */
export function RefillPanel({ api, keyRecord, readOnly, onChanged }: RefillProps) {
  const action = useAction();
  const { refill } = keyRecord;
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const plan = {
      credits: Number(form.get('credits')),
      interval: String(form.get('interval')) as 'day' | 'week' | 'month',
      mode: String(form.get('mode')) as 'add' | 'replace',
    };
    if (await action.run(async () => `Refill set: the balance is ${formatNumber((await api.setRefill(keyRecord.id, plan)).balance)}.`)) onChanged();
  };
  const end = async () => {
    const ended = async () => {
      await api.endRefill(keyRecord.id);
      return 'Refill ended.';
    };
    if (await action.run(ended)) onChanged();
  };
  return (
    <section class="panel" aria-labelledby="refill">
      <h2 id="refill">Refill</h2>
      <p>
        {refill
          ? `Grants ${formatNumber(refill.credits)} credits every ${refill.interval}; ${refill.mode === 'add' ? 'unused ones roll over' : 'unused ones expire at the next refill'}. Next at ${formatTime(refill.next_refill_at)}.`
          : 'No refill plan.'}
      </p>
      {!readOnly && keyRecord.status !== 'revoked' && (
        <form class="inline-form" onSubmit={submit}>
          <label>
            Credits
            <input name="credits" type="number" required min={1} step={1} inputMode="numeric" defaultValue={refill ? String(refill.credits) : ''} />
          </label>
          <label>
            Every
            <select name="interval">
              {(['day', 'week', 'month'] as const).map((interval) => (
                <option key={interval} value={interval} selected={interval === (refill?.interval ?? 'month')}>
                  {interval}
                </option>
              ))}
            </select>
          </label>
          <label>
            Mode
            <select name="mode">
              <option value="replace" selected={refill?.mode !== 'add'}>
                unused credits expire at the next refill
              </option>
              <option value="add" selected={refill?.mode === 'add'}>
                unused credits roll over
              </option>
            </select>
          </label>
          <button type="submit" disabled={action.busy}>
            Set refill
          </button>
          {refill && (
            <button type="button" onClick={end} disabled={action.busy}>
              End refill
            </button>
          )}
        </form>
      )}
      <Outcome action={action} />
    </section>
  );
}
