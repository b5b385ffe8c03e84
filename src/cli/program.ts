import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { IngestError } from '../documents/ingest.js';
import { EmbedderError } from '../embeddings/embedder.js';
import { ModelFolderError } from '../embeddings/local/model-folder.js';
import { accountsCommands } from './commands/accounts.js';
import { adminCommands } from './commands/admin.js';
import { auditCommand } from './commands/audit.js';
import { embedCommand } from './commands/embed.js';
import { faceServiceCommand } from './commands/face-service.js';
import { facesCommands } from './commands/faces.js';
import { ingestCommand } from './commands/ingest.js';
import { keysCommands } from './commands/keys.js';
import { migrateCommand } from './commands/migrate.js';
import { searchCommand } from './commands/search.js';
import { serveCommand } from './commands/serve.js';
import { standInEmbedderCommand } from './commands/stand-in-embedder.js';
import { synonymsCommand } from './commands/synonyms.js';
import { CliContext, type CliIo } from './context.js';
import { CliError } from './errors.js';
import { printable } from './printable.js';

export type { CliIo };

/** The metered-search command line: every command, each from its file in commands/. */
export function buildProgram(cli: CliContext): Command {
  const program = new Command('metered-search')
    .description('Credit-metered search and document API: run the service and operate it.')
    .exitOverride()
    .configureOutput({ writeOut: cli.io.stdout, writeErr: cli.io.stderr });
  serveCommand(program, cli);
  ingestCommand(program, cli);
  embedCommand(program, cli);
  standInEmbedderCommand(program, cli);
  migrateCommand(program, cli);
  auditCommand(program, cli);
  faceServiceCommand(program, cli);
  searchCommand(program, cli);
  synonymsCommand(program, cli);
  facesCommands(program, cli);
  accountsCommands(program, cli);
  keysCommands(program, cli);
  adminCommands(program, cli);
  return program;
}

/**
 * Runs one command; resolves with the process's exit code once it has finished (for serve, once
 * the service has stopped): 0, 1 for a failure, 2 for a command line commander refused.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const cli = new CliContext(io);
  try {
    await buildProgram(cli).parseAsync(argv, { from: 'user' });
    return cli.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    const message = failureMessage(error);
    // With --json, a failure is JSON too, on stdout where the result would have been.
    if (argv.includes('--json') && !(error instanceof CliError && error.reported)) {
      io.stdout(`${JSON.stringify({ error: { message: message ?? String(error) } }, null, 2)}\n`);
    }
    io.stderr(`error: ${printable(message ?? (error as Error).stack ?? String(error))}\n`);
    return 1;
  }
}

/** What went wrong, in the operator's terms; undefined for an unexpected fault (its stack is shown). */
function failureMessage(error: unknown): string | undefined {
  if (error instanceof IngestError) return `${error.message}\nNothing from this file was written.`;
  if (error instanceof EmbedderError)
    return `${error.message}\nThe documents being written when it failed were not written: run the command again once the endpoint answers.`;
  if (error instanceof CliError || error instanceof ConfigError || error instanceof ModelFolderError) return error.message;
  const { code, path } = error as NodeJS.ErrnoException;
  if (code === 'ENOENT') return `The file ${path} does not exist.`;
  if (code === 'EACCES') return `The file ${path} cannot be read: permission denied.`;
  if (code === 'EISDIR') return `${path} is a folder, not a file.`;
  return undefined;
}
