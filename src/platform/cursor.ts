/** A row's place in a newest-first list ordered by (time, id), as an opaque page cursor. */
export function cursorOf(place: { createdAt: string; id: string }): string {
  return Buffer.from(JSON.stringify([place.createdAt, place.id])).toString('base64url');
}

/** The place a cursor stands for; undefined for a string that is not one of ours. */
export function placeOf(cursor: string): { createdAt: string; id: string } | undefined {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    return typeof createdAt === 'string' && typeof id === 'string' ? { createdAt, id } : undefined;
  } catch {
    return undefined;
  }
}
