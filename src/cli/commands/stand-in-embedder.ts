import type { Command } from 'commander';
import { STAND_IN_DIMENSIONS, startStandInEmbedder } from '../../embeddings/stand-in/stand-in-embedder.js';
import type { CliContext } from '../context.js';

export function standInEmbedderCommand(program: Command, cli: CliContext): void {
  program
    .command('stand-in-embedder')
    .description(
      'Serve a stand-in embeddings endpoint (OpenAI API shape) for the demo and tests: a fixed table of concepts, not a model. It shows the mechanics of semantic search, not its quality.',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on', '8091')
    .option('--dimensions <n>', 'length of its vectors', String(STAND_IN_DIMENSIONS))
    .action(async (options: { host: string; port: string; dimensions: string }) => {
      const standIn = await startStandInEmbedder({ host: options.host, port: Number(options.port), dimensions: Number(options.dimensions) });
      cli.io.stderr(
        `stand-in embedder on ${standIn.url}: set EMBEDDINGS_URL=${standIn.url} EMBEDDINGS_MODEL=stand-in EMBEDDINGS_DIMENSIONS=${standIn.dimensions}\n`,
      );
      await cli.untilStopSignal();
      await standIn.close();
    });
}
