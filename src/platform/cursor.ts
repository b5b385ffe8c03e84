import { CONTROL } from './control-characters.js';

/** A row's place in a newest-first list ordered by (time, id), as an opaque page cursor. */
export function cursorOf(place: { createdAt: string; id: string }): string {
  return Buffer.from(JSON.stringify([place.createdAt, place.id])).toString('base64url');
}

/** The place a cursor stands for; undefined for a string that is not one of ours (a forged one included). */
export function placeOf(cursor: string): { createdAt: string; id: string } | undefined {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    if (typeof createdAt !== 'string' || typeof id !== 'string' || CONTROL.test(id)) return undefined;
    // Ours are written by toISOString: anything else is no time either store can compare.
    const time = Date.parse(createdAt);
    return Number.isFinite(time) && new Date(time).toISOString() === createdAt ? { createdAt, id } : undefined;
  } catch {
    return undefined;
  }
}
