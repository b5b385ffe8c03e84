import { useState } from 'preact/hooks';
import { ChargesTable } from '../../../web/src/components/charges-table.js';
import { SpanSelect, UsageChart, useSpan } from '../../../web/src/components/usage-chart.js';
import { formatNumber, formatTime } from '../../../web/src/format.js';
import { useCursorPages, useLoad } from '../../../web/src/hooks.js';
import type { AdminApi, AdminGetKeyResponse } from '../api.js';
import { LoadError } from '../components/outcome.js';
import { Pager } from '../components/pager.js';
import { hrefOf } from '../router.js';
import type { Can } from '../session.js';
import { KeyActions } from './key-actions.js';
import { RefillPanel } from './key-refill.js';

export function KeyPage({ api, keyId, can }: { api: AdminApi; keyId: string; can: Can }) {
  const key = useLoad(() => api.getKey(keyId), [keyId]);
  const [round, setRound] = useState(0);
  const changed = () => {
    key.reload();
    setRound((value) => value + 1);
  };
  const record = key.data;
  return (
    <>
      <p class="breadcrumb">
        <a href={hrefOf.keys}>Keys</a> /
      </p>
      <div class="page-head">
        <h1 tabIndex={-1}>
          {record ? record.name || record.id : 'Key'}
          {record && <span class={`badge ${record.status}`}>{record.status}</span>}
        </h1>
      </div>
      <LoadError message={key.error} />
      {record && (
        <>
          <section class="tiles" aria-label="This key">
            <div class="tile">
              <span class="tile-label">Balance</span>
              <span class="tile-value" data-testid="balance">
                {formatNumber(record.balance)}
              </span>
              <span class="tile-note">credits, its account's</span>
            </div>
            <div class="tile">
              <span class="tile-label">Last charged</span>
              <span class="tile-value small">{formatTime(record.last_used_at)}</span>
            </div>
            <div class="tile">
              <span class="tile-label">Rate limit</span>
              <span class="tile-value small">{record.rate === null ? 'service default' : `${record.rate} per second`}</span>
            </div>
            <div class="tile">
              <span class="tile-label">Id</span>
              <span class="tile-value small mono">{record.id}</span>
            </div>
            <div class="tile">
              <span class="tile-label">Account</span>
              <span class="tile-value small mono">
                {can('accounts:read') ? <a href={hrefOf.account(record.account_id)}>{record.account_id}</a> : record.account_id}
              </span>
            </div>
            <div class="tile">
              <span class="tile-label">Spend caps</span>
              <span class="tile-value small" data-testid="caps">
                {record.cap_spend.length
                  ? record.cap_spend.map((cap) => `${formatNumber(cap.spent)} of ${formatNumber(cap.credits)} this ${cap.interval}`).join(', ')
                  : 'none'}
              </span>
            </div>
            <div class="tile">
              <span class="tile-label">Works until</span>
              <span class="tile-value small" data-testid="expires">
                {record.expires_at === null ? 'no end' : formatTime(record.expires_at)}
              </span>
            </div>
          </section>
          {record.metadata !== null && (
            <section class="panel" aria-labelledby="key-metadata">
              <h2 id="key-metadata">Metadata</h2>
              <pre class="mono metadata">{JSON.stringify(record.metadata, null, 2)}</pre>
            </section>
          )}
          {(can('keys:write') || can('credits:write')) && <KeyActions api={api} keyRecord={record} can={can} onChanged={changed} />}
          <KeyUsage api={api} keyRecord={record} round={round} />
          <div class="columns">
            <Grants keyRecord={record} />
            <RefillPanel api={api} keyRecord={record} readOnly={!can('credits:write')} onChanged={changed} />
          </div>
          <Charges api={api} keyId={record.id} round={round} />
          <Events api={api} keyId={record.id} round={round} />
        </>
      )}
    </>
  );
}

function KeyUsage({ api, keyRecord, round }: { api: AdminApi; keyRecord: AdminGetKeyResponse; round: number }) {
  const { span, spanIndex, setSpanIndex, times, query } = useSpan(round);
  const usage = useLoad(() => api.keyUsage(keyRecord.id, query), [keyRecord.id, query]);
  return (
    <section class="panel" aria-labelledby="key-usage">
      <div class="page-head">
        <h2 id="key-usage">Usage</h2>
        <SpanSelect value={spanIndex} onChange={setSpanIndex} />
      </div>
      <LoadError message={usage.error} />
      <UsageChart times={times} series={usage.data?.series} bucket={span.bucket} />
      <h3>All-time charges by endpoint</h3>
      {Object.keys(keyRecord.charges_by_endpoint).length === 0 ? (
        <p>Never charged.</p>
      ) : (
        <table class="compact">
          <tbody>
            {Object.entries(keyRecord.charges_by_endpoint).map(([endpoint, count]) => (
              <tr key={endpoint}>
                <th scope="row" class="mono">
                  {endpoint}
                </th>
                <td class="number">{formatNumber(count)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Grants({ keyRecord }: { keyRecord: AdminGetKeyResponse }) {
  return (
    <section class="panel" aria-labelledby="grants">
      <h2 id="grants">Grants</h2>
      {keyRecord.expiring.length > 0 && (
        <p>Expiring: {keyRecord.expiring.map((entry) => `${formatNumber(entry.credits)} credits at ${formatTime(entry.at)}`).join('; ')}.</p>
      )}
      <div class="table-scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Why</th>
              <th scope="col" class="number">
                Credits
              </th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {keyRecord.grants.map((grant, index) => (
              <tr key={`${grant.at} ${index}`}>
                <td>{formatTime(grant.at)}</td>
                <td>{grant.reason}</td>
                <td class="number">{formatNumber(grant.credits)}</td>
                <td>{grant.expires_at ? formatTime(grant.expires_at) : 'never'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Charges({ api, keyId, round }: { api: AdminApi; keyId: string; round: number }) {
  const pages = useCursorPages([keyId, round]);
  const charges = useLoad(() => api.keyCharges(keyId, { limit: '20', cursor: pages.cursor }), [keyId, pages.cursor, round]);
  return (
    <section class="panel" aria-labelledby="charges">
      <h2 id="charges">Recent charges</h2>
      <LoadError message={charges.error} />
      {charges.data && charges.data.charges.length === 0 && <p>No charges yet.</p>}
      {charges.data && charges.data.charges.length > 0 && <ChargesTable charges={charges.data.charges} statuses />}
      <Pager label="Pages of charges" page={pages.page} nextCursor={charges.data?.next_cursor} onNext={pages.next} onPrevious={pages.previous} />
    </section>
  );
}

function Events({ api, keyId, round }: { api: AdminApi; keyId: string; round: number }) {
  const events = useLoad(() => api.keyEvents(keyId), [keyId, round]);
  return (
    <section class="panel" aria-labelledby="events">
      <h2 id="events">Billing events</h2>
      <p class="hint">The latest 20, as webhook endpoints receive them.</p>
      <LoadError message={events.error} />
      {events.data && events.data.events.length === 0 && <p>No events yet.</p>}
      {events.data && events.data.events.length > 0 && (
        <ul class="events">
          {events.data.events.map((event) => (
            <li key={event.id}>
              <span class="mono">{event.type}</span> · {formatTime(event.created_at)} · balance{' '}
              {formatNumber(Number((event.data as { balance?: number }).balance ?? 0))}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
