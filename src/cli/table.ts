import { printableValue } from './printable.js';

/** Text renderings shared by the commands' outputs; --json prints a command's result itself instead. */

export function table(cells: string[][]): string {
  const rows = cells.map((row) => row.map(printableValue));
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] as number))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A key's name after its id, escaped; nothing when it has none. */
export function named(name: string): string {
  return name ? ` (${printableValue(name)})` : '';
}

export function rate(rateLimit: number | null): string {
  return rateLimit === null ? 'the default' : `${rateLimit}/s`;
}
