import type { Store } from '../../../store/store.js';
import { CliError } from '../../errors.js';

export async function removeFace(store: Store, docId: string): Promise<{ removed: string }> {
  if (!(await store.faces.remove(docId))) throw new CliError(`No enrolled face has doc_id "${docId}" (see "faces list").`);
  return { removed: docId };
}
