import type { Command } from 'commander';
import { AccountAdmin } from '../../billing/account-admin.js';
import type { AccountRecord } from '../../billing/accounts.js';
import { MAX_BALANCE } from '../../billing/ledger.js';
import { CAP_INTERVALS, type SpendCap } from '../../billing/spend-caps.js';
import type { Store } from '../../store/store.js';
import type { CliContext } from '../context.js';
import { CliError, parseCredits, parseTime } from '../errors.js';
import { plainName } from '../printable.js';
import {
  type AccountDetail,
  type AccountRefill,
  renderAccount,
  renderAccountDetail,
  renderAccountList,
  renderAccountRefill,
} from './accounts-output.js';
import { parseMetadata, type RefillOptions, refillPlanOf } from './keys.js';

/** Account changes from the command line, recorded in the audit log as the CLI's. */
function operatorAccounts(store: Store): AccountAdmin {
  return new AccountAdmin(store.ledger, { name: 'cli', requestId: null });
}

function accountNotFound(id: string): CliError {
  return new CliError(`No account has id "${id}". List them with: metered-search accounts list`);
}

interface CreateOptions {
  name: string;
  externalId?: string;
  metadata?: string;
  credits?: string;
  day?: string;
  week?: string;
  month?: string;
  json?: boolean;
}

function capsOf(options: { day?: string; week?: string; month?: string }): SpendCap[] | null {
  const caps = CAP_INTERVALS.flatMap((interval) => {
    const raw = options[interval];
    return raw === undefined ? [] : [{ credits: parseCredits(raw, 1), interval }];
  });
  return caps.length === 0 ? null : caps;
}

export function accountsCommands(program: Command, cli: CliContext): void {
  const accounts = program.command('accounts').description('Create and manage accounts: the customers whose keys share one balance.');
  accounts
    .command('create')
    .description('Create an account; add keys with: metered-search keys create --account ID')
    .requiredOption('--name <name>', "the customer's name")
    .option('--external-id <id>', 'your own id for the customer, unique among accounts')
    .option('--metadata <json>', 'your own data about the account: a JSON object of at most 4 KB')
    .option('--credits <n>', 'opening balance (integer >= 0)', '0')
    .option('--day <n>', 'spend cap: credits a UTC day over all its keys')
    .option('--week <n>', 'spend cap: credits an ISO week')
    .option('--month <n>', 'spend cap: credits a calendar month')
    .option('--json', 'print the result as JSON')
    .action(async (options: CreateOptions) => {
      cli.output(options.json, await cli.withStore((store) => createAccount(store, options)), (account) => renderAccount(account, 'created'));
    });
  accounts
    .command('list')
    .description('List accounts, newest first.')
    .option('--external-id <id>', 'the account with this external id')
    .option('--name-contains <text>', 'accounts whose name contains this text')
    .option('--json', 'print the result as JSON')
    .action(async (options: { externalId?: string; nameContains?: string; json?: boolean }) => {
      const list = await cli.withStore(async (store) => {
        const page = await store.ledger.listAccountsPage({
          limit: 1000,
          cursor: null,
          externalId: options.externalId,
          nameContains: options.nameContains,
        });
        return page.accounts;
      });
      cli.output(options.json, list, renderAccountList);
    });
  accounts
    .command('show')
    .description('Show an account: its balance, keys, caps, refill plan and what it spent by endpoint.')
    .argument('<id>', 'the account id (acct_…)')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      cli.output(options.json, await cli.withStore((store) => showAccount(store, id)), renderAccountDetail);
    });
  accounts
    .command('topup')
    .description('Add credits to an account.')
    .argument('<id>', 'the account id')
    .requiredOption('--credits <n>', 'credits to add (integer >= 1)')
    .option('--expires-at <time>', 'when what is left of them leaves the balance (RFC 3339); default: never')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { credits: string; expiresAt?: string; json?: boolean }) => {
      const account = await cli.withStore((store) => topUpAccount(store, id, options.credits, options.expiresAt));
      cli.output(options.json, account, (result) => renderAccount(result, 'topped up'));
    });
  accounts
    .command('refill')
    .description('Set an account\'s refill plan, its first period granted at once (docs/api.md, "Refill plans"); --off ends it.')
    .argument('<id>', 'the account id')
    .option('--credits <n>', 'credits each period (integer >= 1)')
    .option('--interval <interval>', 'day, week or month (calendar months)')
    .option('--mode <mode>', "add (the plan's credits roll over) or replace (each period's refill replaces what is left of the last)")
    .option('--off', 'end the plan')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: RefillOptions) => {
      cli.output(options.json, await cli.withStore((store) => setRefill(store, id, options)), renderAccountRefill);
    });
  accounts
    .command('caps')
    .description("Set an account's spend caps over all its keys: at most N credits a UTC day, ISO week or calendar month.")
    .argument('<id>', 'the account id')
    .option('--day <n>', 'credits a day')
    .option('--week <n>', 'credits an ISO week')
    .option('--month <n>', 'credits a calendar month')
    .option('--none', 'remove every cap')
    .option('--json', 'print the result as JSON')
    .action(async (id: string, options: { day?: string; week?: string; month?: string; none?: boolean; json?: boolean }) => {
      const caps = capsOf(options);
      if (options.none === true && caps) throw new CliError('Give --none, or caps, not both.');
      if (options.none !== true && !caps) throw new CliError('Give --day, --week or --month (credits), or --none.');
      const account = await cli.withStore((store) => updateAccount(store, id, { spendCaps: caps }));
      cli.output(options.json, account, (result) => renderAccount(result, 'caps set'));
    });
}

async function createAccount(store: Store, options: CreateOptions): Promise<AccountRecord> {
  const result = await operatorAccounts(store).create({
    name: plainName(options.name, '--name'),
    externalId: options.externalId === undefined ? null : plainName(options.externalId, '--external-id'),
    metadata: options.metadata === undefined ? null : parseMetadata(options.metadata),
    credits: parseCredits(options.credits ?? '0', 0),
    spendCaps: capsOf(options),
  });
  if (result.outcome === 'external-id-taken') throw new CliError(`Account ${result.accountId} has external id "${options.externalId}" already.`);
  return result.account;
}

async function updateAccount(store: Store, id: string, settings: { spendCaps: SpendCap[] | null }): Promise<AccountRecord> {
  const result = await operatorAccounts(store).update(id, settings);
  if (result.outcome === 'not-found') throw accountNotFound(id);
  if (result.outcome === 'external-id-taken') throw new CliError(`Account ${result.accountId} has this external id already.`);
  return result.account;
}

async function showAccount(store: Store, id: string): Promise<AccountDetail> {
  const account = await store.ledger.findAccount(id);
  if (!account) throw accountNotFound(id);
  const [keys, refill, capSpend, usage] = await Promise.all([
    store.ledger.accountKeys(id),
    store.ledger.refillRule(id),
    store.ledger.capSpend(id, account.spendCaps ?? [], Date.now()),
    store.ledger.accountUsage(id, '1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'),
  ]);
  return { account, keys, refill, capSpend, usage };
}

async function topUpAccount(store: Store, id: string, rawCredits: string, expiresAt: string | undefined): Promise<AccountRecord> {
  const credits = parseCredits(rawCredits, 1);
  const result = await operatorAccounts(store).topUp(id, credits, {
    expiresAt: expiresAt === undefined ? undefined : parseTime(expiresAt, '--expires-at'),
  });
  switch (result.outcome) {
    case 'not-found':
      throw accountNotFound(id);
    case 'over-limit':
      throw new CliError(`Account ${id} holds ${result.account.balance} credits; adding ${credits} would pass ${MAX_BALANCE}. Nothing was added.`);
    case 'expiry-past':
      throw new CliError(`--expires-at must be later than now, got "${expiresAt}"`);
    default:
      return result.account;
  }
}

async function setRefill(store: Store, id: string, options: RefillOptions): Promise<AccountRefill> {
  const change = await operatorAccounts(store).setRefill(id, refillPlanOf(options));
  if (change.outcome === 'not-found') throw accountNotFound(id);
  return { id, balance: change.balance, refill: change.rule };
}
