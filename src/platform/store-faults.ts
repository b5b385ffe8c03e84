/** The store cannot be reached or answered too late: the request may be retried (503). */
export class StoreUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('The data store is not available right now.', options);
  }
}

/** The store has no room left for a write, which rolled back whole (507). */
export class StoreFullError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('The data store is out of space.', options);
  }
}

/** A caller's value holds what one of the stores cannot keep; refused by both alike (400 naming `field`). */
export class UnstorableValueError extends Error {
  constructor(readonly field: string) {
    super(`The field ${field} holds a character that cannot be stored (NUL or an unpaired surrogate)`);
  }
}

/** A character no store keeps alike: PostgreSQL refuses NUL and unpaired surrogates, which SQLite would store. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udfff]/u;

function holdsUnstorable(value: unknown): boolean {
  if (typeof value === 'string') return UNSTORABLE.test(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, inner]) => UNSTORABLE.test(key) || holdsUnstorable(inner));
}

/**
 * Refuses, before any write, the first field whose value (within it, any string or key) holds a
 * character one store cannot keep: both stores call it, so both answer alike.
 */
export function refuseUnstorable(fields: Record<string, unknown>): void {
  const field = Object.keys(fields).find((name) => holdsUnstorable(fields[name]));
  if (field !== undefined) throw new UnstorableValueError(field);
}

/**
 * PostgreSQL's data exceptions a caller's value causes: a NUL character (22021, 22P05), a time or
 * number out of its range (22007, 22008, 22003). Validation refuses these first; this is the net
 * under it, so that such a value is a 400 and never a 500. What is wrong, or undefined.
 */
const VALUE_FAULTS: Record<string, string> = {
  '22021': 'a character the database cannot store (NUL)',
  '22P05': 'a character the database cannot store (NUL)',
  '22007': 'a time the database cannot read',
  '22008': 'a time out of the range the database keeps',
  '22003': 'a number out of the range the database keeps',
};

export function valueFault(error: unknown): string | undefined {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? VALUE_FAULTS[code] : undefined;
}

const SQLITE_BUSY = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED']);

/**
 * A database driver's error as the store's own fault, or undefined when it is not one of them:
 * a lock held too long by another writer is "unavailable"; no space (SQLITE_FULL, or ENOSPC
 * surfacing as an I/O error) is "full".
 */
export function storeFault(error: unknown): StoreUnavailableError | StoreFullError | undefined {
  if (error instanceof StoreUnavailableError || error instanceof StoreFullError) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return undefined;
  if (SQLITE_BUSY.has(code)) return new StoreUnavailableError({ cause: error });
  const full = code === 'SQLITE_FULL' || (code.startsWith('SQLITE_IOERR') && /disk|space|full/i.test(String(message ?? '')));
  return full ? new StoreFullError({ cause: error }) : undefined;
}
