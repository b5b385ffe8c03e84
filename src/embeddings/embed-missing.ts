import type { DocumentRecord, DocumentStore } from '../documents/document-store.js';
import type { DocumentEmbeddings } from './document-embeddings.js';

const PAGE = 500;

export interface EmbedProgress {
  /** Documents looked at so far, of `total`. */
  scanned: number;
  total: number;
  /** Documents written again with a vector of the current model. */
  embedded: number;
}

/**
 * Gives every stored document a vector of the configured model: those stored without one, or with
 * another model's (or before their text changed), are written again through the store's ingest,
 * which embeds them. A page at a time, each page its own transaction: stopped midway, a second run
 * goes on where the first left off.
 */
export async function embedMissing(
  documents: DocumentStore,
  embeddings: DocumentEmbeddings,
  onProgress?: (progress: EmbedProgress) => void,
): Promise<EmbedProgress> {
  const progress: EmbedProgress = { scanned: 0, total: await documents.countDocuments(), embedded: 0 };
  let after = '';
  for (;;) {
    const page = await documents.documentsPage(after, PAGE);
    if (page.length === 0) break;
    const stale: DocumentRecord[] = page
      .filter((document) => document.embeddingKey !== embeddings.keyOf(document))
      .map(({ docId, title, text, metadata }) => ({ docId, title, text, metadata }));
    if (stale.length > 0) progress.embedded += await documents.ingestDocuments(fromList(stale));
    progress.scanned += page.length;
    after = page[page.length - 1].docId;
    onProgress?.({ ...progress, total: Math.max(progress.total, progress.scanned) });
  }
  return { ...progress, total: Math.max(progress.total, progress.scanned) };
}

async function* fromList(documents: DocumentRecord[]): AsyncGenerator<DocumentRecord> {
  yield* documents;
}
