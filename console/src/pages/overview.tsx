import { SpanSelect, UsageChart, useSpan } from '../../../web/src/components/usage-chart.js';
import { formatNumber } from '../../../web/src/format.js';
import { useLoad } from '../../../web/src/hooks.js';
import { byEndpointAndStatus, requestsFromMetrics } from '../../../web/src/usage.js';
import type { AdminApi } from '../api.js';
import { LoadError } from '../components/outcome.js';
import { hrefOf } from '../router.js';

/** The operator's own traffic (admin API, metrics, this console) is left out: callers' requests only. */
const OPERATOR_ROUTES = /^(\/admin|\/metrics|\/console|unmatched)/;

export function OverviewPage({ api }: { api: AdminApi }) {
  const { span, spanIndex, setSpanIndex, times, query } = useSpan();
  const usage = useLoad(() => api.usage(query), [query]);
  const live = useLoad(() => api.metrics().then(requestsFromMetrics), []);
  const series = usage.data?.series;
  const liveRows = live.data ?? [];
  const refused = (status: string) => liveRows.filter((row) => row.status === status).reduce((sum, row) => sum + row.count, 0);

  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Overview</h1>
        <SpanSelect value={spanIndex} onChange={setSpanIndex} />
      </div>
      <LoadError message={usage.error} />
      <section class="tiles" aria-label="Totals">
        <Tile label="Credits spent" value={usage.error ? null : usage.data?.totals.credits} note={span.label} />
        <Tile label="Requests charged" value={usage.error ? null : usage.data?.totals.count} note={span.label} />
        <Tile label="402: not enough credits" value={live.error ? null : live.data && refused('402')} note="this instance, since it started" />
        <Tile label="429: over the key's rate" value={live.error ? null : live.data && refused('429')} note="this instance, since it started" />
      </section>
      <section class="panel">
        <UsageChart times={times} series={series} bucket={span.bucket} />
      </section>
      <div class="columns">
        <section class="panel" aria-labelledby="top-keys">
          <h2 id="top-keys">Top keys by credits spent</h2>
          {usage.data && usage.data.top_keys.length === 0 && <p>No key was charged in this span.</p>}
          {usage.data && usage.data.top_keys.length > 0 && (
            <table>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col" class="number">
                    Credits
                  </th>
                  <th scope="col" class="number">
                    Requests
                  </th>
                </tr>
              </thead>
              <tbody>
                {usage.data.top_keys.map((key) => (
                  <tr key={key.id}>
                    <td>
                      <a href={hrefOf.key(key.id)}>{key.name || key.id}</a>
                    </td>
                    <td class="number">{formatNumber(key.credits)}</td>
                    <td class="number">{formatNumber(key.charges)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <section class="panel" aria-labelledby="by-endpoint">
          <h2 id="by-endpoint">Charged requests by endpoint and status</h2>
          <p class="hint">Every instance, {span.label.toLowerCase()}; the status is what the request ended with.</p>
          <CountTable rows={byEndpointAndStatus(series ?? []).map((row) => ({ first: row.endpoint, second: row.status, count: row.count }))} />
        </section>
      </div>
      <section class="panel" aria-labelledby="answered">
        <h2 id="answered">Callers' requests answered by route and status</h2>
        <p class="hint">This instance since it started, refusals included (from /metrics); the admin API is left out.</p>
        <LoadError message={live.error} />
        <CountTable
          rows={liveRows
            .filter((row) => !OPERATOR_ROUTES.test(row.route))
            .sort((a, b) => b.count - a.count)
            .map((row) => ({ first: row.route, second: row.status, count: row.count }))}
          firstLabel="Route"
        />
      </section>
    </>
  );
}

/** A figure; undefined while it loads, null when it could not be read. */
function Tile({ label, value, note }: { label: string; value: number | null | undefined; note: string }) {
  return (
    <div class="tile">
      <span class="tile-label">{label}</span>
      <span class="tile-value">{value === undefined ? '…' : value === null ? '—' : formatNumber(value)}</span>
      <span class="tile-note">{note}</span>
    </div>
  );
}

function CountTable({ rows, firstLabel = 'Endpoint' }: { rows: Array<{ first: string; second: string; count: number }>; firstLabel?: string }) {
  if (rows.length === 0) return <p>Nothing yet.</p>;
  return (
    <div class="table-scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">{firstLabel}</th>
            <th scope="col">Status</th>
            <th scope="col" class="number">
              Requests
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.first} ${row.second}`}>
              <td class="mono">{row.first}</td>
              <td>{row.second}</td>
              <td class="number">{formatNumber(row.count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
