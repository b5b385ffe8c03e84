import type { Command } from 'commander';
import { KeyAdmin } from '../../billing/key-admin.js';
import { type KeyRecord, type KeyStatus, MAX_BALANCE } from '../../billing/ledger.js';
import { REFILL_INTERVALS, REFILL_MODES, type RefillInterval, type RefillMode, type RefillPlan } from '../../billing/refills.js';
import { CAP_INTERVALS } from '../../billing/spend-caps.js';
import type { Store } from '../../store/store.js';
import type { CliContext } from '../context.js';
import { CliError, notFound, parseCredits, parseGraceSeconds, parseRate, parseTime } from '../errors.js';
import { plainName } from '../printable.js';
import {
  type CreatedKey,
  type KeyRefill,
  type KeyUsage,
  type RolledKey,
  renderCreatedKey,
  renderKey,
  renderKeyList,
  renderRefill,
  renderRolledKey,
  renderUsage,
} from './keys-output.js';

const STATUS_COMMANDS = [
  ['revoke', 'revoked', 'revoked', 'Revoke a key permanently.'],
  ['disable', 'disabled', 'disabled', 'Disable a key (reversible with enable).'],
  ['enable', 'active', 'enabled', 'Enable a disabled key.'],
] as const;

export function keysCommands(program: Command, cli: CliContext): void {
  const keys = program.command('keys').description('Create and manage API keys.');
  keys
    .command('create')
    .description('Create a key, in an account of its own or of --account; the plain key is printed once.')
    .option('--credits <n>', 'starting balance of its own account (integer >= 0; required without --account), or credits granted to --account')
    .option('--account <id>', 'the account the key joins and spends from (acct_…)')
    .option('--name <name>', 'a label for the key')
    .option('--rate <n>', "requests per second for this key (default: the service's RATE_LIMIT_PER_S)")
    .option('--expires-at <time>', 'when the key stops working (RFC 3339, later than now); default: never')
    .option('--metadata <json>', 'your own data about the key: a JSON object of at most 4 KB')
    .option('--json', 'print the result as JSON')
    .action(async (options: CreateOptions & { json?: boolean }) => {
      cli.output(options.json, await cli.withStore((store) => createKey(store, options)), renderCreatedKey);
    });
  keys
    .command('caps')
    .description("Set a key's spend caps: at most N credits a UTC day, ISO week or calendar month (a request past one is 429, uncharged).")
    .argument('<key-or-id>', 'the plain key or its id')
    .option('--day <n>', 'credits a day')
    .option('--week <n>', 'credits an ISO week')
    .option('--month <n>', 'credits a calendar month')
    .option('--none', 'remove every cap')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: CapOptions & { json?: boolean }) => {
      const key = await cli.withStore((store) => setCaps(store, keyOrId, options));
      cli.output(options.json, key, (result) => renderKey(result, 'caps set'));
    });
  keys
    .command('set-rate')
    .description('Set a key\'s rate limit in requests per second, or "default" for the service\'s RATE_LIMIT_PER_S.')
    .argument('<key-or-id>', 'the plain key or its id')
    .argument('<rate>', 'requests per second (integer >= 1), or "default"')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, rate: string, options: { json?: boolean }) => {
      const key = await cli.withStore((store) => setKeyRate(store, keyOrId, rate));
      cli.output(options.json, key, (result) => renderKey(result, 'rate set'));
    });
  keys
    .command('topup')
    .description('Add credits to a key.')
    .argument('<key-or-id>', 'the plain key or its id')
    .requiredOption('--credits <n>', 'credits to add (integer >= 1)')
    .option('--expires-at <time>', 'when what is left of them leaves the balance (RFC 3339, e.g. 2027-01-31T23:59:59Z); default: never')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: { credits: string; expiresAt?: string; json?: boolean }) => {
      const key = await cli.withStore((store) => topUpKey(store, keyOrId, options.credits, options.expiresAt));
      cli.output(options.json, key, (result) => renderKey(result, 'topped up'));
    });
  keys
    .command('refill')
    .description('Set a key\'s refill plan, its first period granted at once (docs/api.md, "Refill plans"); --off ends it.')
    .argument('<key-or-id>', 'the plain key or its id')
    .option('--credits <n>', 'credits each period (integer >= 1)')
    .option('--interval <interval>', 'day, week or month (calendar months)')
    .option('--mode <mode>', "add (the plan's credits roll over) or replace (each period's refill replaces what is left of the last)")
    .option('--off', 'end the plan')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: RefillOptions) => {
      cli.output(options.json, await cli.withStore((store) => setRefill(store, keyOrId, options)), renderRefill);
    });
  keys
    .command('roll')
    .description('Give a key a new plain key, printed once; the old key keeps working for the grace period.')
    .argument('<key-or-id>', 'the plain key or its id')
    .requiredOption('--grace-seconds <n>', 'how long the old key keeps working (0 to 604800)')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: { graceSeconds: string; json?: boolean }) => {
      cli.output(options.json, await cli.withStore((store) => rollKey(store, keyOrId, options.graceSeconds)), renderRolledKey);
    });
  for (const [command, status, verb, description] of STATUS_COMMANDS) {
    keys
      .command(command)
      .description(description)
      .argument('<key-or-id>', 'the plain key or its id')
      .option('--json', 'print the result as JSON')
      .action(async (keyOrId: string, options: { json?: boolean }) => {
        const { key, changed } = await cli.withStore((store) => setKeyStatus(store, keyOrId, status));
        cli.output(options.json, { ...key, changed }, (result) => renderKey(result, changed ? verb : `was already ${verb}; nothing changed`));
      });
  }
  keys
    .command('list')
    .description('List keys (never the plain keys).')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      cli.output(options.json, await cli.withStore((store) => store.ledger.listKeys()), renderKeyList);
    });
  keys
    .command('usage')
    .description('Show credits granted, charges recorded and the most recent charges of a key.')
    .argument('<key-or-id>', 'the plain key or its id')
    .option('--limit <n>', 'how many recent charges to show', '20')
    .option('--json', 'print the result as JSON')
    .action(async (keyOrId: string, options: { limit?: string; json?: boolean }) => {
      cli.output(options.json, await cli.withStore((store) => keyUsage(store, keyOrId, options.limit)), renderUsage);
    });
}

/** Key changes from the command line, recorded in the audit log as the CLI's. */
function operatorKeys(store: Store): KeyAdmin {
  return new KeyAdmin(store.ledger, { name: 'cli', requestId: null }, Date.now, true);
}

interface CreateOptions {
  credits?: string;
  account?: string;
  name?: string;
  rate?: string;
  expiresAt?: string;
  metadata?: string;
}

async function createKey(store: Store, options: CreateOptions): Promise<CreatedKey> {
  if (options.credits === undefined && options.account === undefined)
    throw new CliError('--credits is required for a key of its own account (or give --account).');
  const credits = parseCredits(options.credits ?? '0', 0);
  const rateLimit = options.rate === undefined ? null : parseRate(options.rate, false);
  const expiresAt = options.expiresAt === undefined ? null : new Date(parseTime(options.expiresAt, '--expires-at')).toISOString();
  if (expiresAt !== null && Date.parse(expiresAt) <= Date.now()) throw new CliError('--expires-at must be later than now.');
  const metadata = options.metadata === undefined ? null : parseMetadata(options.metadata);
  const name = plainName(options.name ?? '', '--name');
  const keys = operatorKeys(store);
  const created =
    options.account === undefined
      ? { outcome: 'created' as const, ...(await keys.create(credits, name, rateLimit, { expiresAt, metadata })) }
      : await keys.createInAccount(plainName(options.account, '--account'), credits, name, rateLimit, { expiresAt, metadata });
  if (created.outcome === 'not-found') throw new CliError(`No account has id "${options.account}".`);
  if (created.outcome === 'over-limit')
    throw new CliError(
      `Account ${options.account} holds ${created.balance} credits; adding ${credits} would pass ${MAX_BALANCE}. Nothing was created.`,
    );
  const { key, record } = created;
  return {
    key,
    id: record.id,
    accountId: record.accountId,
    name: record.name,
    balance: record.balance,
    rateLimit: record.rateLimit,
    expiresAt: record.expiresAt,
  };
}

export function parseMetadata(raw: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new CliError('--metadata must be a JSON object, such as \'{"customer": "cus_42"}\'.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CliError('--metadata must be a JSON object.');
  if (Buffer.byteLength(raw) > 4096) throw new CliError('--metadata may hold at most 4096 bytes as JSON.');
  return value as Record<string, unknown>;
}

interface CapOptions {
  day?: string;
  week?: string;
  month?: string;
  none?: boolean;
}

async function setCaps(store: Store, keyOrId: string, options: CapOptions): Promise<KeyRecord> {
  const caps = CAP_INTERVALS.flatMap((interval) => {
    const raw = options[interval];
    return raw === undefined ? [] : [{ credits: parseCredits(raw, 1), interval }];
  });
  if (options.none === true && caps.length > 0) throw new CliError('Give --none, or caps, not both.');
  if (options.none !== true && caps.length === 0) throw new CliError('Give --day, --week or --month (credits), or --none.');
  const change = await operatorKeys(store).updateSettings(keyOrId, { spendCaps: caps.length === 0 ? null : caps });
  if (change.outcome === 'not-found') throw notFound(keyOrId);
  if (change.outcome === 'revoked') throw new CliError(`Key ${change.key.id} is revoked, which is permanent: its caps do not change.`);
  return change.key;
}

async function setKeyRate(store: Store, keyOrId: string, rate: string): Promise<KeyRecord> {
  const change = await operatorKeys(store).setRateLimit(keyOrId, parseRate(rate, true));
  if (change.outcome === 'not-found') throw notFound(keyOrId);
  if (change.outcome === 'revoked') throw new CliError(`Key ${change.key.id} is revoked, which is permanent: its rate does not change.`);
  return change.key;
}

async function topUpKey(store: Store, keyOrId: string, rawCredits: string, expiresAt: string | undefined): Promise<KeyRecord> {
  const credits = parseCredits(rawCredits, 1);
  const result = await operatorKeys(store).topUp(keyOrId, credits, {
    expiresAt: expiresAt === undefined ? undefined : parseTime(expiresAt, '--expires-at'),
  });
  switch (result.outcome) {
    case 'not-found':
      throw notFound(keyOrId);
    case 'revoked':
      throw new CliError(`Key ${result.key.id} is revoked, which is permanent: it cannot be topped up. Create a new key instead.`);
    case 'over-limit':
      throw new CliError(
        `Key ${result.key.id}'s account holds ${result.key.balance} credits; adding ${credits} would pass the most an account may hold (${MAX_BALANCE}). Nothing was added.`,
      );
    case 'topped-up':
    case 'granted-before':
      return result.key;
    case 'expiry-past':
      throw new CliError(`--expires-at must be later than now, got "${expiresAt}"`);
  }
}

export interface RefillOptions {
  credits?: string;
  interval?: string;
  mode?: string;
  off?: boolean;
  json?: boolean;
}

export function refillPlanOf(options: RefillOptions): RefillPlan | null {
  if (options.off) {
    if (options.credits ?? options.interval ?? options.mode) throw new CliError('--off takes no --credits, --interval or --mode');
    return null;
  }
  const { interval, mode } = options;
  if (options.credits === undefined || !interval || !mode) throw new CliError('a plan needs --credits, --interval and --mode (or --off to end it)');
  if (!REFILL_INTERVALS.includes(interval as RefillInterval)) throw new CliError(`--interval must be day, week or month, got "${interval}"`);
  if (!REFILL_MODES.includes(mode as RefillMode)) throw new CliError(`--mode must be add or replace, got "${mode}"`);
  return { credits: parseCredits(options.credits, 1), interval: interval as RefillInterval, mode: mode as RefillMode };
}

async function setRefill(store: Store, keyOrId: string, options: RefillOptions): Promise<KeyRefill> {
  const change = await operatorKeys(store).setRefill(keyOrId, refillPlanOf(options));
  switch (change.outcome) {
    case 'not-found':
      throw notFound(keyOrId);
    case 'revoked':
      throw new CliError(`Key ${change.key.id} is revoked, which is permanent: it gets no refill plan.`);
    case 'set': {
      const key = (await operatorKeys(store).find(keyOrId)) as KeyRecord;
      return { id: key.id, name: key.name, balance: key.balance, refill: change.rule };
    }
  }
}

async function rollKey(store: Store, keyOrId: string, rawGrace: string): Promise<RolledKey> {
  const result = await operatorKeys(store).roll(keyOrId, parseGraceSeconds(rawGrace));
  switch (result.outcome) {
    case 'not-found':
      throw notFound(keyOrId);
    case 'revoked':
      throw new CliError(`Key ${result.record.id} is revoked, which is permanent: it cannot be rolled. Create a new key instead.`);
    case 'rolled':
      return { key: result.key, id: result.record.id, name: result.record.name, oldKeyValidUntil: result.oldKeyValidUntil };
  }
}

/** revoke (permanent), disable and enable (reversible); `changed` is false when the key already had that status. */
async function setKeyStatus(store: Store, keyOrId: string, status: KeyStatus): Promise<{ key: KeyRecord; changed: boolean }> {
  const change = await operatorKeys(store).setStatus(keyOrId, status);
  switch (change.outcome) {
    case 'not-found':
      throw notFound(keyOrId);
    case 'revoked':
      throw new CliError(`Key ${change.key.id} is revoked, which is permanent; create a new key instead.`);
    default:
      return { key: change.key, changed: change.outcome === 'changed' };
  }
}

async function keyUsage(store: Store, keyOrId: string, rawLimit: string | undefined): Promise<KeyUsage> {
  const key = await operatorKeys(store).find(keyOrId);
  if (!key) throw notFound(keyOrId);
  const limit = rawLimit === undefined ? 20 : Number(rawLimit);
  if (!Number.isSafeInteger(limit) || limit < 0) throw new CliError(`--limit must be an integer >= 0, got "${rawLimit}"`);
  const [grants, charged, recentCharges] = await Promise.all([
    store.ledger.listGrants(key.accountId),
    store.ledger.countCharges(key.id),
    store.ledger.listCharges(key.id, limit),
  ]);
  return { key, granted: grants.reduce((sum, grant) => sum + grant.amount, 0), charged, grants, recentCharges };
}
