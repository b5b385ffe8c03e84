import type { Command } from 'commander';
import { ADMIN_SCOPES, type AdminScope, isAdminScope, READ_SCOPES, readOnlyScopes } from '../../admin/admin-scopes.js';
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
  scopes: AdminScope[];
}

function tokenLine(token: AdminTokenRecord): string {
  const state = token.revokedAt ? `revoked ${token.revokedAt}` : 'active';
  return `${token.id}  ${printableValue(token.name) || '-'}  ${scopesShown(token.scopes)}  created ${token.createdAt}  ${state}`;
}

function scopesShown(scopes: readonly AdminScope[]): string {
  if (scopes.length === ADMIN_SCOPES.length) return 'every scope';
  return scopes.length === READ_SCOPES.length && readOnlyScopes(scopes) ? 'read-only' : scopes.join(',');
}

/** The scopes --scopes names, comma-separated, or --read-only's; every scope when neither is given. */
function scopesOption(options: { scopes?: string; readOnly?: boolean }): boolean | AdminScope[] {
  if (options.scopes === undefined) return options.readOnly === true;
  if (options.readOnly) throw new CliError('Give --scopes or --read-only, not both.');
  const named = options.scopes
    .split(',')
    .map((scope) => scope.trim())
    .filter(Boolean);
  const unknown = named.filter((scope) => !isAdminScope(scope));
  if (named.length === 0 || unknown.length > 0) {
    throw new CliError(`--scopes takes scopes from: ${ADMIN_SCOPES.join(', ')}${unknown.length > 0 ? `; not ${unknown.join(', ')}` : ''}.`);
  }
  return named.filter(isAdminScope);
}

/** `admin tokens create|list|revoke`: the bearer tokens of the admin API. */
/** The command line, as the audit log names it. */
const CLI = { actor: 'cli', requestId: null };

export function adminCommands(program: Command, cli: CliContext): void {
  const tokens = program.command('admin').description('The admin API.').command('tokens').description('Bearer tokens for the admin API.');
  tokens
    .command('create')
    .description('Create a token; the plain token is printed once.')
    .requiredOption('--name <name>', 'who or what uses it (shown as the actor in the audit log)')
    .option('--scopes <list>', `what it may do, comma-separated: ${ADMIN_SCOPES.join(',')} (default: every scope)`)
    .option('--read-only', 'every :read scope and no other')
    .option('--json', 'print the result as JSON')
    .action(async (options: { name: string; scopes?: string; readOnly?: boolean; json?: boolean }) => {
      const access = scopesOption(options);
      const created = await cli.withStore(async (store) => {
        const { token, record } = await new AdminTokens(store.admin).create(plainName(options.name, '--name'), access, CLI);
        return { token, id: record.id, name: record.name, read_only: record.readOnly, scopes: record.scopes } satisfies CreatedToken;
      });
      cli.output(
        options.json,
        created,
        (result) =>
          `Created admin token ${result.id} (${result.name}; ${scopesShown(result.scopes)}).\nToken (shown once, store it now): ${result.token}`,
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
        const token = await new AdminTokens(store.admin).revoke(id, CLI);
        if (!token) throw new CliError(`No admin token has id "${id}" (see "admin tokens list").`);
        return token;
      });
      cli.output(options.json, revoked, (result) => `Revoked admin token ${result.id}.`);
    });
}
