import { formatNumber, formatTime } from '../format.js';

/** A charge as the admin API and the portal list them. */
export interface ChargeRow {
  id: number;
  at: string;
  endpoint: string;
  credits: number;
  key_id?: string;
  status?: number | null;
}

/**
 * Charges, newest first as given: with `names`, which key made each (by name where it has one);
 * with `statuses`, the final status of each request.
 */
export function ChargesTable({ charges, names, statuses }: { charges: ChargeRow[]; names?: Map<string, string>; statuses?: boolean }) {
  return (
    <div class="table-scroll">
      <table class="compact">
        <thead>
          <tr>
            <th scope="col">When</th>
            {names && <th scope="col">Key</th>}
            <th scope="col">Endpoint</th>
            {statuses && <th scope="col">Status</th>}
            <th scope="col" class="number">
              Credits
            </th>
          </tr>
        </thead>
        <tbody>
          {charges.map((charge) => (
            <tr key={charge.id}>
              <td>{formatTime(charge.at)}</td>
              {names && <td>{names.get(charge.key_id ?? '') ?? charge.key_id}</td>}
              <td class="mono">{charge.endpoint}</td>
              {statuses && <td>{charge.status ?? 'not known'}</td>}
              <td class="number">{formatNumber(charge.credits)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
