import { formatTime } from '../../../web/src/format.js';
import { useCursorPages, useLoad } from '../../../web/src/hooks.js';
import type { AdminApi } from '../api.js';
import { LoadError } from '../components/outcome.js';
import { Pager } from '../components/pager.js';
import { hrefOf } from '../router.js';

export function AuditLogPage({ api }: { api: AdminApi }) {
  const pages = useCursorPages([]);
  const log = useLoad(() => api.auditLog({ limit: '50', cursor: pages.cursor }), [pages.cursor]);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Audit log</h1>
      </div>
      <p class="hint">Every change made through the admin API (by the token's name) or the command line (cli), newest first.</p>
      <LoadError message={log.error} />
      {log.data && log.data.entries.length === 0 && <p>Nothing has been changed yet.</p>}
      {log.data && log.data.entries.length > 0 && (
        <div class="table-scroll panel">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {log.data.entries.map((entry, index) => (
                <tr key={`${entry.at} ${entry.request_id ?? index}`}>
                  <td>{formatTime(entry.at)}</td>
                  <td>{entry.actor}</td>
                  <td class="mono">{entry.action}</td>
                  <td class="mono">
                    {entry.target && entry.action.startsWith('keys.') ? <a href={hrefOf.key(entry.target)}>{entry.target}</a> : (entry.target ?? '—')}
                  </td>
                  <td class="mono detail">{Object.keys(entry.detail).length ? JSON.stringify(entry.detail) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager label="Pages of the audit log" page={pages.page} nextCursor={log.data?.next_cursor} onNext={pages.next} onPrevious={pages.previous} />
    </>
  );
}
