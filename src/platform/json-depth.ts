/** Levels of nested objects and arrays a JSON value may have: deeper values break JSON.stringify downstream. */
export const MAX_JSON_DEPTH = 64;

/** Whether objects and arrays nest more than `limit` levels; iterative, so any depth can be judged. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}
