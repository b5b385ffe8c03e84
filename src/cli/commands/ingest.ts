import { readDocuments } from '../../documents/ingest.js';
import type { Store } from '../../store/store.js';

export interface IngestSummary {
  file: string;
  documents: number;
  seconds: number;
  documentsPerSecond: number;
}

export async function ingestFile(
  store: Store,
  file: string,
  onProgress?: (documents: number, documentsPerSecond: number) => void,
): Promise<IngestSummary> {
  const started = performance.now();
  const rate = (documents: number) => Math.round(documents / Math.max((performance.now() - started) / 1000, 1e-3));
  const documents = await store.documents.ingestDocuments(await readDocuments(file), (progress) =>
    onProgress?.(progress.documents, rate(progress.documents)),
  );
  const seconds = (performance.now() - started) / 1000;
  return { file, documents, seconds: Math.round(seconds * 1000) / 1000, documentsPerSecond: rate(documents) };
}
