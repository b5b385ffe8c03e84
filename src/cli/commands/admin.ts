import type { Command } from 'commander';
import type { AdminTokenRecord } from '../../admin/admin-store.js';
import { AdminTokens } from '../../admin/admin-tokens.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { plainName, printableValue } from '../printable.js';

interface CreatedToken {
  token: string;
  id: string;
  name: string;
  read_only: boolean;
}

function tokenLine(token: AdminTokenRecord): string {
  const state = token.revokedAt ? `revoked ${token.revokedAt}` : 'active';
  return `${token.id}  ${printableValue(token.name) || '-'}  ${token.readOnly ? 'read-only' : 'read-write'}  created ${token.createdAt}  ${state}`;
}

/** `admin tokens create|list|revoke`: the bearer tokens of the admin API. */
export function adminCommands(program: Command, cli: CliContext): void {
  const tokens = program.command('admin').description('The admin API.').command('tokens').description('Bearer tokens for the admin API.');
  tokens
    .command('create')
    .description('Create a token; the plain token is printed once.')
    .requiredOption('--name <name>', 'who or what uses it (shown as the actor in the audit log)')
    .option('--read-only', 'may read, not change')
    .option('--json', 'print the result as JSON')
    .action(async (options: { name: string; readOnly?: boolean; json?: boolean }) => {
      const created = await cli.withStore(async (store) => {
        const { token, record } = await new AdminTokens(store.admin).create(plainName(options.name, '--name'), options.readOnly === true);
        await store.admin.appendAudit({
          actor: 'cli',
          action: 'tokens.create',
          target: record.id,
          requestId: null,
          detail: { name: record.name, read_only: record.readOnly },
        });
        return { token, id: record.id, name: record.name, read_only: record.readOnly } satisfies CreatedToken;
      });
      cli.output(
        options.json,
        created,
        (result) =>
          `Created admin token ${result.id} (${result.name}${result.read_only ? ', read-only' : ''}).\nToken (shown once, store it now): ${result.token}`,
      );
    });
  tokens
    .command('list')
    .description('List the tokens (never the plain tokens).')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      const list = await cli.withStore((store) => new AdminTokens(store.admin).list());
      cli.output(options.json, list, (result) => (result.length === 0 ? 'No admin tokens.' : result.map(tokenLine).join('\n')));
    });
  tokens
    .command('revoke')
    .description('Revoke a token for good.')
    .argument('<id>', 'the token id (see "admin tokens list")')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const revoked = await cli.withStore(async (store) => {
        const token = await new AdminTokens(store.admin).revoke(id);
        if (!token) throw new CliError(`No admin token has id "${id}" (see "admin tokens list").`);
        await store.admin.appendAudit({ actor: 'cli', action: 'tokens.revoke', target: id, requestId: null, detail: {} });
        return token;
      });
      cli.output(options.json, revoked, (result) => `Revoked admin token ${result.id}.`);
    });
}
