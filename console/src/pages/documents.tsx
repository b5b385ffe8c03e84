import { useState } from 'preact/hooks';
import { ConfirmDialog } from '../../../web/src/components/confirm.js';
import { formatNumber } from '../../../web/src/format.js';
import { useAction, useLoad } from '../../../web/src/hooks.js';
import type { AdminApi } from '../api.js';
import { LoadError, Outcome } from '../components/outcome.js';
import type { Can } from '../session.js';

export function DocumentsPage({ api, can }: { api: AdminApi; can: Can }) {
  const readOnly = !can('documents:write');
  const count = useLoad(() => api.countDocuments(), []);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Documents</h1>
      </div>
      <LoadError message={count.error} />
      <section class="tiles" aria-label="Corpus">
        <div class="tile">
          <span class="tile-label">Documents</span>
          <span class="tile-value" data-testid="document-count">
            {count.data ? formatNumber(count.data.count) : '…'}
          </span>
        </div>
      </section>
      {!readOnly && <AddDocuments api={api} onAdded={count.reload} />}
      <LookUp api={api} readOnly={readOnly} onDeleted={count.reload} />
    </>
  );
}

function AddDocuments({ api, onAdded }: { api: AdminApi; onAdded: () => void }) {
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const file = new FormData(formElement).get('file');
    if (!(file instanceof File) || file.size === 0) {
      await action.run(async () => {
        throw new Error('Choose a JSON lines file first.');
      });
      return;
    }
    const ok = await action.run(async () => {
      const answer = await api.ingestJsonLines(await file.text());
      return `Added ${formatNumber(answer.ingested)} documents from ${file.name}.`;
    });
    if (ok) {
      formElement.reset();
      onAdded();
    }
  };
  return (
    <section class="panel" aria-labelledby="add-documents">
      <h2 id="add-documents">Add documents</h2>
      <p class="hint">
        A JSON lines file: one document a line, such as <code>{'{"doc_id": "a1", "title": "…", "text": "…"}'}</code>. Every line is added, or none
        (the message names the bad line). Documents with an id already stored replace it.
      </p>
      <form class="inline-form" onSubmit={submit}>
        <label>
          JSON lines file
          <input name="file" type="file" accept=".jsonl,.ndjson,application/x-ndjson,application/jsonl" required />
        </label>
        <button type="submit" class="primary" disabled={action.busy}>
          Add documents
        </button>
      </form>
      <Outcome action={action} />
    </section>
  );
}

function LookUp({ api, readOnly, onDeleted }: { api: AdminApi; readOnly: boolean; onDeleted: () => void }) {
  const action = useAction();
  const [found, setFound] = useState<{ id: string; body: Record<string, unknown> }>();
  const [confirming, setConfirming] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const docId = String(new FormData(event.currentTarget as HTMLFormElement).get('doc_id') ?? '').trim();
    setFound(undefined);
    await action.run(async () => {
      const body = await api.getDocument(docId);
      setFound({ id: docId, body });
      return `Found "${docId}".`;
    });
  };
  const remove = async (docId: string) => {
    setConfirming(false);
    const ok = await action.run(async () => {
      await api.deleteDocument(docId);
      return `Deleted "${docId}".`;
    });
    if (ok) {
      setFound(undefined);
      onDeleted();
    }
  };
  return (
    <section class="panel" aria-labelledby="look-up">
      <h2 id="look-up">Look up a document</h2>
      <form class="inline-form" onSubmit={submit} role="search" aria-label="Look up a document">
        <label>
          Document id
          <input name="doc_id" required autoComplete="off" />
        </label>
        <button type="submit" disabled={action.busy}>
          Look up
        </button>
      </form>
      <Outcome action={action} />
      {found && (
        <article class="document" aria-label={`Document ${found.id}`}>
          <h3>{String(found.body.title ?? found.id)}</h3>
          <pre>{JSON.stringify(found.body, null, 2)}</pre>
          {!readOnly && (
            <button type="button" class="danger" onClick={() => setConfirming(true)}>
              Delete this document
            </button>
          )}
        </article>
      )}
      {found && confirming && (
        <ConfirmDialog
          title={`Delete "${found.id}"?`}
          confirmLabel="Delete"
          danger
          onConfirm={() => remove(found.id)}
          onCancel={() => setConfirming(false)}
        >
          <p>It leaves the corpus and stops matching queries on every instance within a second.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
