import { useEffect, useState } from 'preact/hooks';
import { formatNumber } from '../../../web/src/format.js';
import { useAction, useLoad } from '../../../web/src/hooks.js';
import type { AdminApi, AdminGetSynonymsResponse } from '../api.js';
import { LoadError, Outcome } from '../components/outcome.js';
import type { Can } from '../session.js';

type Rule = AdminGetSynonymsResponse['synonyms'][number];

/** Members typed comma-separated: each trimmed, empty ones dropped. */
const membersOf = (text: string) =>
  text
    .split(',')
    .map((member) => member.trim())
    .filter(Boolean);

const ruleText = (rule: Rule) => ('words' in rule ? rule.words.join(' = ') : `${rule.from} → ${rule.to.join(', ')}`);

export function SearchSettingsPage({ api, can }: { api: AdminApi; can: Can }) {
  const readOnly = !can('documents:write');
  const loaded = useLoad(() => api.getSynonyms(), []);
  const [rules, setRules] = useState<Rule[]>([]);
  const [changed, setChanged] = useState(false);
  const save = useAction();
  useEffect(() => {
    if (loaded.data) setRules(loaded.data.synonyms);
  }, [loaded.data]);
  const edit = (next: Rule[]) => {
    setRules(next);
    setChanged(true);
    save.clear();
  };
  const submit = () =>
    void save
      .run(async () => {
        const answer = await api.putSynonyms({ synonyms: rules });
        setRules(answer.synonyms);
        setChanged(false);
        return `Saved ${formatNumber(answer.synonyms.length)} rules (version ${answer.version}): searches apply them now, on every instance within a second.`;
      })
      .then((ok) => ok && loaded.reload());
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Search settings</h1>
      </div>
      <LoadError message={loaded.error} />
      <section class="panel" aria-labelledby="synonym-rules">
        <h2 id="synonym-rules">Synonyms</h2>
        <p class="hint">
          A set's members all match each other; a one-way rule makes its first word match the others too, not the other way. A member may be a phrase,
          matched as one. Applied to lexical and hybrid queries at once, with no re-index.
        </p>
        {rules.length === 0 ? (
          <p data-testid="no-synonyms">{loaded.data ? 'No rules yet.' : '…'}</p>
        ) : (
          <ul class="rules">
            {rules.map((rule, index) => (
              <li key={`${index}-${ruleText(rule)}`} data-testid="synonym-rule">
                <span class="badge">{'words' in rule ? 'set' : 'one-way'}</span> {ruleText(rule)}{' '}
                {!readOnly && (
                  <button type="button" aria-label={`Remove ${ruleText(rule)}`} onClick={() => edit(rules.filter((_, at) => at !== index))}>
                    Remove
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {!readOnly && (
          <>
            <AddRule onAdd={(rule) => edit([...rules, rule])} />
            <p>
              <button type="button" class="primary" disabled={save.busy || !changed} onClick={submit}>
                Save rules
              </button>{' '}
              {changed && <span class="hint">Unsaved changes.</span>}
            </p>
          </>
        )}
        <Outcome action={save} />
        {loaded.data && (
          <p class="hint" data-testid="synonyms-version">
            Version {loaded.data.version}
            {loaded.data.updated_at ? `, set ${new Date(loaded.data.updated_at).toLocaleString()}` : ''}.
          </p>
        )}
      </section>
    </>
  );
}

function AddRule({ onAdd }: { onAdd: (rule: Rule) => void }) {
  const [kind, setKind] = useState<'set' | 'one-way'>('set');
  const [problem, setProblem] = useState<string>();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const words = membersOf(String(data.get('words') ?? ''));
    const from = String(data.get('from') ?? '').trim();
    if (kind === 'set' && words.length < 2) return setProblem('A set needs at least 2 members, comma-separated.');
    if (kind === 'one-way' && (from === '' || words.length === 0)) return setProblem('A one-way rule needs a word and what it also matches.');
    setProblem(undefined);
    onAdd(kind === 'set' ? { words } : { from, to: words });
    form.reset();
  };
  return (
    <form class="inline-form" aria-label="Add a rule" onSubmit={submit}>
      <label>
        Kind
        <select name="kind" value={kind} onChange={(event) => setKind((event.currentTarget as HTMLSelectElement).value as 'set' | 'one-way')}>
          <option value="set">set</option>
          <option value="one-way">one-way</option>
        </select>
      </label>
      {kind === 'one-way' && (
        <label>
          From
          <input name="from" placeholder="gdpr" />
        </label>
      )}
      <label>
        {kind === 'set' ? 'Members (comma-separated)' : 'Also matches (comma-separated)'}
        <input name="words" placeholder={kind === 'set' ? 'car, automobile, motor vehicle' : 'general data protection regulation'} />
      </label>
      <button type="submit">Add rule</button>
      {problem && (
        <p class="outcome error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
