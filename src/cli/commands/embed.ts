import type { Command } from 'commander';
import { type EmbedProgress, embedMissing } from '../../embeddings/embed-missing.js';
import { documentEmbeddingsOf } from '../../store/open.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';

const BAR_WIDTH = 30;

export function embedCommand(program: Command, cli: CliContext): void {
  program
    .command('embed')
    .description('Embed the stored documents that lack a vector of the configured model (EMBEDDINGS_URL), after it is set or changed.')
    .requiredOption('--missing', 'embed only what lacks a current vector (the only mode)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const embeddings = documentEmbeddingsOf(cli.config());
      if (!embeddings) throw new CliError('No embedding model is configured: set EMBEDDINGS_URL, EMBEDDINGS_MODEL and EMBEDDINGS_DIMENSIONS.');
      const bar = cli.io.interactive && !options.json ? (progress: EmbedProgress) => cli.io.stderr(`\r${progressBar(progress)}`) : undefined;
      const result = await cli.withStore(async (store) => {
        const done = await embedMissing(store.documents, embeddings, bar);
        await store.documents.writeIndexes?.();
        return done;
      });
      if (bar) cli.io.stderr('\n');
      cli.output(options.json, result, (done) =>
        done.embedded === 0
          ? `Every one of the ${done.scanned} documents already has a vector of ${embeddings.embedder.model}.`
          : `Embedded ${done.embedded} of ${done.scanned} documents with ${embeddings.embedder.model}.`,
      );
    });
}

function progressBar(progress: EmbedProgress): string {
  const share = progress.total === 0 ? 1 : progress.scanned / progress.total;
  const filled = Math.round(share * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${progress.scanned}/${progress.total} documents, ${progress.embedded} embedded`;
}
