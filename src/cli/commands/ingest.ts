import type { Command } from 'commander';
import { readDocuments } from '../../documents/ingest.js';
import type { Store } from '../../store/store.js';
import type { CliContext } from '../context.js';

export interface IngestSummary {
  file: string;
  documents: number;
  seconds: number;
  documentsPerSecond: number;
  /** How long writing the search indexes took after the documents were in (the embedded store only). */
  indexSeconds: number;
}

export function ingestCommand(program: Command, cli: CliContext): void {
  program
    .command('ingest')
    .description('Load documents from a JSONL file or a JSON array file; all or nothing.')
    .argument('<file>', 'JSONL (one document per line) or a JSON array')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const progress =
        cli.io.interactive && !options.json
          ? (documents: number, rate: number) => cli.io.stderr(`\r${documents} documents, ${rate} docs/s`)
          : undefined;
      const summary = await cli.withStore((store) => ingestFile(store, file, progress));
      if (progress) cli.io.stderr('\n');
      cli.output(options.json, summary, renderIngest);
    });
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
  const documentsPerSecond = rate(documents);
  const indexing = performance.now();
  await store.documents.writeIndexes?.();
  const indexSeconds = (performance.now() - indexing) / 1000;
  return { file, documents, seconds: Math.round(seconds * 1000) / 1000, documentsPerSecond, indexSeconds: Math.round(indexSeconds * 1000) / 1000 };
}

export function renderIngest(summary: IngestSummary): string {
  if (summary.documents === 0) return `Nothing was ingested: ${summary.file} holds no documents.`;
  const indexes = summary.indexSeconds > 0 ? ` The search indexes were written in ${summary.indexSeconds} s, for the next start to read.` : '';
  return `Ingested ${summary.documents} documents from ${summary.file} in ${summary.seconds} s (${summary.documentsPerSecond} docs/s).${indexes}`;
}
