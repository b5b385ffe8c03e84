import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { formatNumber } from '../../../web/src/format.js';
import { useAction } from '../../../web/src/hooks.js';
import type { AdminApi, AdminSearchResponse } from '../api.js';
import { Outcome } from '../components/outcome.js';

type Hit = AdminSearchResponse['hits']['documents'][number];

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * A highlight as the service gives it (HTML-escaped text, the matches in <mark>) as elements: text
 * nodes and <mark>s, never parsed as HTML, so nothing a document holds can become markup here.
 */
function Marked({ html }: { html: string }) {
  const parts: ComponentChildren[] = [];
  let marked = false;
  for (const [index, part] of html.split(/(<mark>|<\/mark>)/).entries()) {
    if (part === '<mark>' || part === '</mark>') {
      marked = part === '<mark>';
      continue;
    }
    const text = part.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] as string);
    parts.push(marked ? <mark key={index}>{text}</mark> : text);
  }
  return <>{parts}</>;
}

/** A metadata filter typed as field=value: the value as a number when it reads as one. */
function filtersOf(text: string): Record<string, string | number> | undefined {
  const [field, ...rest] = text.split('=');
  const value = rest.join('=').trim();
  if (!field?.trim() || value === '') return undefined;
  return { [field.trim()]: /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value };
}

export function SearchPage({ api }: { api: AdminApi }) {
  const action = useAction();
  const [answer, setAnswer] = useState<AdminSearchResponse>();
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const query = String(form.get('query') ?? '').trim();
    const filters = filtersOf(String(form.get('filter') ?? ''));
    const operator = form.get('operator') === 'and' ? 'and' : undefined;
    const sort = String(form.get('sort') ?? '').trim();
    const facets = String(form.get('facets') ?? '')
      .split(',')
      .map((field) => field.trim())
      .filter(Boolean);
    void action.run(async () => {
      if (query === '') throw new Error('Type what to search for.');
      const found = await api.search({
        query,
        top_k: 10,
        highlight: true,
        ...(filters ? { filters } : {}),
        ...(facets.length > 0 ? { facets } : {}),
        ...(operator ? { operator } : {}),
        ...(sort ? { sort: [sort] } : {}),
      });
      setAnswer(found);
      return `${formatNumber(found.hits.total)} matching document${found.hits.total === 1 ? '' : 's'}.`;
    });
  };
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Search</h1>
      </div>
      <section class="panel" aria-labelledby="search-corpus">
        <h2 id="search-corpus">Search the corpus as callers do</h2>
        <p class="hint">
          The same ranking as POST /query, free and charged to no key: "quoted words" are a phrase, -word leaves out the documents holding it.
        </p>
        <form class="inline-form" role="search" onSubmit={submit}>
          <label>
            Query
            <input name="query" type="search" required />
          </label>
          <label>
            Words
            <select name="operator">
              <option value="or">any word</option>
              <option value="and">every word</option>
            </select>
          </label>
          <label>
            Sort (field:asc or field:desc)
            <input name="sort" placeholder="year:desc" />
          </label>
          <label>
            Filter (field=value)
            <input name="filter" placeholder="jurisdiction=EU" />
          </label>
          <label>
            Facets (fields, comma-separated)
            <input name="facets" placeholder="jurisdiction" />
          </label>
          <button type="submit" class="primary" disabled={action.busy}>
            Search
          </button>
        </form>
        <Outcome action={action} />
      </section>
      {answer && <Results answer={answer} />}
    </>
  );
}

function Results({ answer }: { answer: AdminSearchResponse }) {
  return (
    <section class="panel" aria-labelledby="search-results">
      <h2 id="search-results">Results</h2>
      {answer.facets &&
        Object.entries(answer.facets).map(([field, counts]) => (
          <p key={field} class="hint" data-testid={`facet-${field}`}>
            {field}:{' '}
            {Object.entries(counts)
              .map(([value, count]) => `${value} (${formatNumber(count)})`)
              .join(', ') || 'none'}
          </p>
        ))}
      {answer.hits.documents.length === 0 ? (
        <p>No document matches.</p>
      ) : (
        <ol class="hits">
          {answer.hits.documents.map((hit) => (
            <HitItem key={hit.doc_id} hit={hit} />
          ))}
        </ol>
      )}
    </section>
  );
}

function HitItem({ hit }: { hit: Hit }) {
  return (
    <li data-testid="search-hit">
      <strong>
        <Marked html={hit.highlights?.title ?? hit.title} />
      </strong>{' '}
      <span class="mono hint">
        {hit.doc_id} · {hit.confidence.toFixed(3)}
      </span>
      {hit.highlights?.text && (
        <p class="snippet">
          <Marked html={hit.highlights.text} />
        </p>
      )}
    </li>
  );
}
