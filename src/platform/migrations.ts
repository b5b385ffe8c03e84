/** A schema change as a domain owns it: its SQL, and its version, its place in the one order a store applies. */
export interface Migration {
  version: number;
  sql: string;
}

/**
 * The domains' migrations as one list in version order. Versions must run from 1 without a gap or
 * a repeat, so that a database's recorded versions keep meaning the same changes: anything else is a
 * mistake in the code, found at start.
 */
export function inVersionOrder(...domains: ReadonlyArray<readonly Migration[]>): string[] {
  const all = domains.flat().sort((a, b) => a.version - b.version);
  all.forEach((migration, index) => {
    if (migration.version !== index + 1)
      throw new Error(`migration versions must run 1, 2, 3, … without a gap or a repeat; found ${migration.version} at ${index + 1}`);
  });
  return all.map((migration) => migration.sql);
}
