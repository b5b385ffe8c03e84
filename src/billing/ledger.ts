import type { NewAuditEntry } from '../admin/admin-store.js';
import type { IdempotencyEntry, StoredResponse } from '../idempotency/idempotency-store.js';
import type {
  AccountCreation,
  AccountQuery,
  AccountRecord,
  AccountSettings,
  AccountTopUpResult,
  AccountUpdate,
  AccountUsageRow,
  KeyAccount,
  NewAccount,
} from './accounts.js';
import type { Refill, RefillPlan, RefillRule } from './refills.js';
import type { CapReached, SpendCap } from './spend-caps.js';

/**
 * The ledger: accounts and their balances, their keys, the credits granted and the charges made. Two implementations,
 * SQLite (sqlite-ledger.ts) and PostgreSQL (postgres-ledger.ts), pass the same contract tests.
 * Expected outcomes (unknown key, no credits) are values; only faults throw.
 */

export type KeyStatus = 'active' | 'disabled' | 'revoked';

/**
 * What an operator's change writes in its own transaction besides the ledger: its audit entry, and
 * for a request sent with an Idempotency-Key, the answer kept for its retries. All of it commits with
 * the change, or none of it does, so a retry after any fault finds either nothing done or its answer.
 */
export interface ChangeRecord<Result> {
  /** The audit entry of this outcome; undefined when the outcome changed nothing. */
  audit(result: Result): NewAuditEntry | undefined;
  /** The claim of the request making the change, completed with the answer to this outcome (undefined: a refusal, released after). */
  claim?: { entry: IdempotencyEntry; answer(result: Result): StoredResponse | undefined };
}

export interface KeyRecord {
  id: string;
  /** The account whose balance the key spends (billing/accounts.ts). */
  accountId: string;
  name: string;
  status: KeyStatus;
  /** The account's balance, which every key of the account spends. */
  balance: number;
  createdAt: string;
  /** Requests per second this key may make; null means the service's default. */
  rateLimit: number | null;
  /** The account's grants that expire with credits left as of their last settlement (see Ledger.expiringCredits). */
  expiringGrants: number;
  /** The account's credits per request by endpoint path, overriding PRICES; null: none. */
  prices: Record<string, number> | null;
  /** The account's balance at or below which a debit sends credits.low; null: LOW_BALANCE_THRESHOLD. */
  lowBalanceThreshold: number | null;
  /** When the key stops working, RFC 3339 in UTC; null: never. */
  expiresAt: string | null;
  /** The operator's own data about the key; null: none. */
  metadata: Record<string, unknown> | null;
  /** At most this many credits a day, week or month spent through this key; null: no cap. */
  spendCaps: SpendCap[] | null;
  /** The account's caps, over every key of it; null: none. */
  accountSpendCaps: SpendCap[] | null;
}

/** What an operator may change on a key besides its status and rate (PATCH /admin/keys/{id}); absent fields stay. */
export interface KeySettings {
  /** The key's label. */
  name?: string;
  prices?: Record<string, number> | null;
  lowBalanceThreshold?: number | null;
  /** When the key stops working (RFC 3339); null: never. */
  expiresAt?: string | null;
  /** The operator's own data about the key (a JSON object); null: none. */
  metadata?: Record<string, unknown> | null;
  /** At most this many credits a day, week or month (one cap per interval); null: none. */
  spendCaps?: SpendCap[] | null;
}

export interface DebitOptions {
  /** Recorded on the charge, so a claim taken over after a crash can tell that its request already paid. */
  idempotencyRef?: string;
  /** Credits this request costs: 1 unless prices say otherwise. */
  cost?: number;
  /** When the debit is decided, ms since the epoch (default: now): a capped debit's periods follow it. */
  at?: number;
}

export { BILLABLE_ENDPOINTS, type BillableEndpoint, MAX_BALANCE, PRICE_NAMES } from '../rules.js';

export type TopUpResult =
  | { outcome: 'topped-up'; key: KeyRecord }
  /** A grant with this idempotency ref was made before (its answer was lost): nothing more was added. */
  | { outcome: 'granted-before'; key: KeyRecord }
  | { outcome: 'not-found' }
  /** Revoked keys are closed for good: nothing more is granted to them. */
  | { outcome: 'revoked'; key: KeyRecord }
  /** The balance would pass MAX_BALANCE: nothing was added. */
  | { outcome: 'over-limit'; key: KeyRecord };

export type DebitResult =
  | { outcome: 'charged'; balance: number; chargeId: number }
  /** The price would take a period's spend over a cap: nothing was charged. */
  | { outcome: 'capped'; balance: number; reached: CapReached }
  | { outcome: 'no-credits' }
  | { outcome: 'inactive'; status: KeyStatus }
  | { outcome: 'unknown-key' };

export type RefillChange =
  /** `changed`: false when the key already followed this plan (or had none to end); `refill`: what was granted now; `balance`: after. */
  | { outcome: 'set'; rule: RefillRule | null; refill: Refill | undefined; changed: boolean; balance: number }
  | { outcome: 'not-found' }
  | { outcome: 'revoked'; key: KeyRecord };

/** An account's refill plan change: as a key's, which no revocation refuses. */
export type AccountRefillChange = Exclude<RefillChange, { outcome: 'revoked' }>;

export type RollResult =
  | { outcome: 'rolled'; key: KeyRecord }
  | { outcome: 'not-found' }
  /** Revoked keys are closed for good: they get no new key. */
  | { outcome: 'revoked'; key: KeyRecord };

/** A rolled key's former hash, still accepted until `validUntil` (RFC 3339). */
export interface RetiredKey {
  key: KeyRecord;
  /** The key's current hash: the one its debits go by. */
  keyHash: string;
  validUntil: string;
}

export interface ChargeRecord {
  id: number;
  /** The key that spent it. */
  keyId: string;
  endpoint: string;
  at: string;
  /** HTTP status the charged request ended with; null until it is known (or if the process died first). */
  outcomeStatus: number | null;
  /** What it cost: the endpoint's price for the key then. */
  credits: number;
}

export interface CreditGrant {
  accountId: string;
  amount: number;
  at: string;
  reason: 'create' | 'topup' | 'refill';
  /** When what is left of it leaves the balance; null: never. */
  expiresAt: string | null;
}

/** Credits of one expiring grant still in the balance, and when they leave it. */
export interface ExpiringCredits {
  credits: number;
  at: string;
}

/** What was left of a grant when it expired, taken from the balance. */
export interface Expiry {
  accountId: string;
  amount: number;
  /** The grant's expiry time. */
  at: string;
  /** The account's balance after it. */
  balance: number;
}

export interface GrantOptions {
  /** The claim of the request granting (Ledger.topUp). */
  idempotencyRef?: string;
  /** RFC 3339 in UTC (as toISOString writes it); absent or null: the credits never expire. */
  expiresAt?: string | null;
}

/** One account's ledger: what was granted, what its keys were charged, what is left. */
export interface LedgerAudit {
  accountId: string;
  granted: number;
  /** Credits the charges took (their prices). */
  charged: number;
  /** What was left of grants when they expired. */
  expired: number;
  balance: number;
  /** granted - charged - expired = balance >= 0, decided by the database in exact integers (the numbers above are for display). */
  consistent: boolean;
}

export interface NewKey {
  keyHash: string;
  id: string;
  name: string;
  /** Granted to the key's account: the opening balance of an account of its own, or a grant to the one it joins. */
  credits: number;
  /** The account the key joins; absent: one of its own. */
  account?: KeyAccount;
  rateLimit?: number | null;
  expiresAt?: string | null;
  metadata?: Record<string, unknown> | null;
  spendCaps?: SpendCap[] | null;
}

/** A key whose end has come, announced once (key.expired). */
export interface KeyEnd {
  keyId: string;
  expiredAt: string;
}

/** Which keys to list, newest first; `cursor` is a previous page's nextCursor. */
export interface KeyQuery {
  limit: number;
  cursor: string | null;
  accountId?: string;
  status?: KeyStatus;
  name?: string;
  /** Keys whose name contains this text, whatever its case. */
  nameContains?: string;
  /** Keys with at most this many credits. */
  maxBalance?: number;
}

/** A key's charges summed up: when it was last charged, and how many times on each endpoint. */
export interface KeyActivity {
  lastUsedAt: string | null;
  chargesByEndpoint: Record<string, number>;
}

export type UsageBucket = 'hour' | 'day';

/** Charges counted per bucket of time, endpoint and final status, from `from` (inclusive) to `to` (exclusive). */
export interface UsageQuery {
  /** One key's, or every key's when absent. */
  keyId?: string;
  /** The keys of one account. */
  accountId?: string;
  from: string;
  to: string;
  bucket: UsageBucket;
}

export interface UsageRow {
  /** The bucket's first instant, RFC 3339 in UTC. */
  start: string;
  endpoint: string;
  /** The HTTP status the charged request ended with; null when it is not known. */
  status: number | null;
  count: number;
  /** The credits those charges took (their prices). */
  credits: number;
}

/** Accounts: created, found, listed, changed, topped up and given refill plans. */
export interface AccountLedger {
  createAccount(input: NewAccount, record?: ChangeRecord<AccountCreation>): Promise<AccountCreation>;
  findAccount(id: string): Promise<AccountRecord | undefined>;
  /** A page of accounts, newest first, and the cursor of the next page (null after the last). */
  listAccountsPage(query: AccountQuery): Promise<{ accounts: AccountRecord[]; nextCursor: string | null }>;
  /** Every key of the account, oldest first. */
  accountKeys(accountId: string): Promise<KeyRecord[]>;
  updateAccount(accountId: string, settings: AccountSettings, record?: ChangeRecord<AccountUpdate>): Promise<AccountUpdate>;
  /** Adds credits to an account, with the rules of `topUp`. */
  topUpAccount(accountId: string, amount: number, options?: GrantOptions, record?: ChangeRecord<AccountTopUpResult>): Promise<AccountTopUpResult>;
  /** Sets an account's refill plan, with the rules of `setRefill`. */
  setAccountRefill(accountId: string, plan: RefillPlan | null, now: string, record?: ChangeRecord<AccountRefillChange>): Promise<AccountRefillChange>;
}

/** Keys, and the debits that spend their accounts' balances. */
export interface KeyLedger {
  /** Creates a key in an account of its own, or in an existing one (accounts are never deleted: the caller checks it exists). */
  createKey(input: NewKey, record?: ChangeRecord<KeyRecord>): Promise<KeyRecord>;
  /** The key whose current hash this is; a rolled key's former hashes are found by findRetiredKey. */
  findKeyByHash(keyHash: string): Promise<KeyRecord | undefined>;
  findRetiredKey(keyHash: string): Promise<RetiredKey | undefined>;
  findKeyById(id: string): Promise<KeyRecord | undefined>;
  listKeys(): Promise<KeyRecord[]>;
  /** A page of keys, newest first, and the cursor of the next page (null after the last). */
  listKeysPage(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | null }>;
  /**
   * Gives a key that is not revoked a new hash, atomically. Its former hash keeps working until
   * `oldKeyValidUntil` (RFC 3339), or stops at once when that is null. Former hashes past their
   * time are forgotten here.
   */
  rollKey(keyId: string, newKeyHash: string, oldKeyValidUntil: string | null, now: string, record?: ChangeRecord<RollResult>): Promise<RollResult>;
  setKeyStatus(keyId: string, status: KeyStatus, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined>;
  /** Sets the key's requests per second; null returns it to the service's default. */
  setKeyRateLimit(keyId: string, rateLimit: number | null, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined>;
  /**
   * Spends the request's cost (all of it, or nothing: 402) in one conditional write and records the
   * charge with it, atomically, with credits.low and credits.depleted events when the balance
   * crosses those marks. Resolves only once all of it is durable.
   */
  debit(keyHash: string, endpoint: string, options?: DebitOptions): Promise<DebitResult>;
  /**
   * A debit of a key with spend caps, its own or its account's: in one transaction holding the
   * account's row, the price is refused when it would take a cap's current period over the cap
   * ('capped', with credits.cap_reached written once per cap and period), else spent and recorded,
   * the periods' spend with it. `now`: ms since the epoch, which decides the periods.
   */
  debitCapped(keyId: string, endpoint: string, options: DebitOptions, now: number): Promise<DebitResult>;
  /**
   * Keys whose end has come and was not announced yet (at most `limit`): each is marked and its
   * key.expired event written in one transaction, so every end is announced once, whatever the
   * number of instances.
   */
  announceExpiredKeys(now: string, limit: number): Promise<KeyEnd[]>;
  /** What each cap's current period (at `now`, ms since the epoch) has spent through the key, or the account (`acct_` id), shortest interval first. */
  capSpend(holderId: string, caps: SpendCap[], now: number): Promise<Array<{ cap: SpendCap; spent: number; resetsAt: string }>>;
  /** Sets a key's end, metadata or caps, and its account's prices or low-balance mark; undefined for an unknown key. */
  updateKeySettings(keyId: string, settings: KeySettings, record?: ChangeRecord<KeyRecord | undefined>): Promise<KeyRecord | undefined>;
  /** Fills in the final HTTP status of a charged request. Not awaited on the request path. */
  recordOutcome(chargeId: number, status: number): void;
}

/** What adds credits to a key's account or takes unspent ones away: top-ups, refill plans and expiries. */
export interface GrantLedger {
  /**
   * Adds credits to the account of a key that is not revoked, up to MAX_BALANCE, atomically, settling the account first.
   * `idempotencyRef` is recorded on the grant, in the same transaction: a retry that took over the
   * claim of an attempt which granted and died before answering finds it and grants nothing more.
   */
  topUp(keyId: string, amount: number, options?: GrantOptions, record?: ChangeRecord<TopUpResult>): Promise<TopUpResult>;
  /**
   * Takes from the balance what is left of every grant whose time has come (at most `limit`), each
   * in its own transaction, recording it as an expiry. Any number of instances may run it at once:
   * each expiry happens once.
   */
  expireDue(now: string, limit: number): Promise<Expiry[]>;
  /** The account's expiring credits still in its balance, soonest first, with the credits spent so far taken from them. */
  expiringCredits(accountId: string): Promise<ExpiringCredits[]>;
  refillRule(accountId: string): Promise<RefillRule | null>;
  /**
   * Sets the refill plan of a key's account (null ends it). A new plan's first period is granted at once, unless the
   * key's refills already paid for the period now running: it then starts when that period ends.
   * The plan a key already follows changes nothing. A revoked key gets none.
   */
  setRefill(keyId: string, plan: RefillPlan | null, now: string, record?: ChangeRecord<RefillChange>): Promise<RefillChange>;
  /**
   * Grants the current period of every plan whose next period has come (at most `limit`), once per
   * period whatever the number of instances: a missed period is not granted after downtime.
   */
  refillDue(now: string, limit: number): Promise<Refill[]>;
}

/** Reads for reports and the audit: charges, grants and usage over time. None of them changes anything. */
export interface LedgerReports {
  /** The latest charges of the account's keys, newest first. */
  accountCharges(accountId: string, limit: number): Promise<ChargeRecord[]>;
  /** Charges of the account's keys in the span, by key and endpoint. */
  accountUsage(accountId: string, from: string, to: string): Promise<AccountUsageRow[]>;
  keyActivity(keyId: string): Promise<KeyActivity>;
  /** Charges by bucket, endpoint and status: each charge counted once. */
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /** The keys that spent the most credits in the span, most first, with their charges. */
  topSpenders(from: string, to: string, limit: number): Promise<Array<{ keyId: string; name: string; charges: number; credits: number }>>;
  /** The key's charges, newest first; with `beforeId`, those older than that charge. */
  listCharges(keyId: string, limit?: number, beforeId?: number): Promise<ChargeRecord[]>;
  countCharges(keyId: string): Promise<number>;
  listGrants(accountId: string): Promise<CreditGrant[]>;
  /** Every account's ledger, read in one consistent snapshot. */
  auditLedger(): Promise<LedgerAudit[]>;
  /** Idempotent requests (by claim ref) with more than one charge: there should be none. */
  auditIdempotentCharges(): Promise<Array<{ ref: string; charges: number }>>;
}

/** The ledger, as each store implements it (SqliteLedger, PostgresLedger). */
export interface Ledger extends AccountLedger, KeyLedger, GrantLedger, LedgerReports {}
