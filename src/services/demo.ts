import { fileURLToPath } from 'node:url';
import { KeyAdmin } from '../billing/key-admin.js';
import { readDocuments } from '../documents/ingest.js';
import type { Store } from '../store/store.js';

export const DEMO_CORPUS_PATH = fileURLToPath(new URL('../../demo/corpus.jsonl', import.meta.url));
export const DEMO_CREDITS = 100;

/**
 * On the first start with an empty store: loads the demo corpus that ships with the package and
 * creates a demo key, so a newcomer can call every endpoint at once. Does nothing otherwise.
 */
export async function seedDemo(store: Store): Promise<{ documents: number; key: string; credits: number } | undefined> {
  if ((await store.documents.countDocuments()) > 0 || (await store.ledger.listKeys()).length > 0) return undefined;
  const documents = await store.documents.ingestDocuments(await readDocuments(DEMO_CORPUS_PATH));
  const { key } = await new KeyAdmin(store.ledger).create(DEMO_CREDITS, 'demo');
  return { documents, key, credits: DEMO_CREDITS };
}
