import { formatNumber } from '../format.js';

/** One row of a usage breakdown: a key's charges and credits at one endpoint. */
export interface UsageByKeyRow {
  key_id: string;
  endpoint: string;
  charges: number;
  credits: number;
}

/** Charges and credits by key and endpoint, keys by name where `names` has one. */
export function UsageByKeyTable({ rows, names, testId }: { rows: UsageByKeyRow[]; names: Map<string, string>; testId: string }) {
  return (
    <div class="table-scroll">
      <table class="compact" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Endpoint</th>
            <th scope="col" class="number">
              Charges
            </th>
            <th scope="col" class="number">
              Credits
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.key_id} ${row.endpoint}`}>
              <td>{names.get(row.key_id) ?? row.key_id}</td>
              <td class="mono">{row.endpoint}</td>
              <td class="number">{formatNumber(row.charges)}</td>
              <td class="number">{formatNumber(row.credits)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
