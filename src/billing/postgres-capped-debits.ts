import type { PoolClient } from 'pg';
import { holderOf } from './accounts.js';
import type { DebitJob } from './debit-batcher.js';
import { capEventData } from './events.js';
import type { DebitResult, KeyRecord } from './ledger.js';
import { refusalFor } from './ledger-rules.js';
import { recordEvent } from './postgres-credits.js';
import { type CapHolder, type CapPeriodState, capPeriods, decideCapped, periodStarts, type SpendCap } from './spend-caps.js';

/** Where a capped debit's spend is counted: the key's own periods, or its account's. */
export const SPEND_TABLES: Record<CapHolder, { table: string; column: string }> = {
  key: { table: 'key_spend', column: 'key_id' },
  account: { table: 'account_spend', column: 'account_id' },
};

/**
 * One key's capped debits of a batch, on a client whose transaction holds the key's and its
 * account's rows: its caps' and its account's caps' periods read once, its debits decided in order
 * (spend-caps.ts, decideCapped), and the balance, charges, periods' spend and events written together.
 */
export async function debitCappedKey(
  client: PoolClient,
  key: KeyRecord | undefined,
  batch: DebitJob[],
  lowBalanceThreshold: number | null,
): Promise<DebitResult[]> {
  if (key?.status !== 'active') return batch.map(() => refusalFor(key?.status));
  const at = (batch[0] as DebitJob).at;
  await foldUncounted(client, 'key', key.id, key.spendCaps, at);
  await foldUncounted(client, 'account', key.accountId, key.accountSpendCaps, at);
  const periods = [
    ...(await capPeriodStates(client, 'key', key.id, key.spendCaps, at)),
    ...(await capPeriodStates(client, 'account', key.accountId, key.accountSpendCaps, at)),
  ];
  const { decisions, spent, reachedNow } = decideCapped(
    batch.map((job) => job.cost),
    key.balance,
    periods,
  );
  const after = key.balance - spent;
  if (spent > 0) {
    await client.query('UPDATE accounts SET balance = balance - $2 WHERE id = $1', [key.accountId, spent]);
    for (const period of periods) {
      const { table, column } = SPEND_TABLES[period.holder];
      await client.query(
        `INSERT INTO ${table} (${column}, interval, period_start, spent) VALUES ($1, $2, $3, $4)
         ON CONFLICT (${column}, interval, period_start) DO UPDATE SET spent = ${table}.spent + excluded.spent`,
        [holderIdOf(key, period.holder), period.cap.interval, period.start, spent],
      );
    }
    // As the debit functions call it: only at or under a mark, the depleted one (0) included.
    const mark = key.lowBalanceThreshold ?? lowBalanceThreshold;
    if (after <= Math.max(mark ?? 0, 0))
      await client.query('SELECT record_crossings($1, $2, $3, $4, $5)', [key.accountId, key.id, key.balance, after, mark]);
  }
  for (const { period, reached } of reachedNow) {
    const { table, column } = SPEND_TABLES[period.holder];
    await client.query(
      `INSERT INTO ${table} (${column}, interval, period_start, spent, cap_reached_sent) VALUES ($1, $2, $3, 0, true)
       ON CONFLICT (${column}, interval, period_start) DO UPDATE SET cap_reached_sent = true`,
      [holderIdOf(key, period.holder), period.cap.interval, period.start],
    );
    await recordEvent(client, 'credits.cap_reached', holderOf(key), capEventData(after, reached));
  }
  const charged = batch.filter((_, position) => decisions[position]?.outcome === 'charged');
  const { rows: ids } =
    charged.length === 0
      ? { rows: [] }
      : await client.query<{ id: number }>(
          `INSERT INTO charges (key_id, endpoint, at, idempotency_ref, credits)
     SELECT $1, endpoint, $2, ref, cost FROM unnest($3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS job(endpoint, ref, cost, position)
     ORDER BY position RETURNING id`,
          [
            key.id,
            new Date(at).toISOString(),
            charged.map((job) => job.endpoint),
            charged.map((job) => job.idempotencyRef),
            charged.map((job) => job.cost),
          ],
        );
  const chargeIds = ids.map((row) => Number(row.id)).sort((a, b) => a - b);
  const lastCharge = chargeIds.at(-1);
  if (lastCharge !== undefined) {
    if (key.spendCaps) await setCapCounted(client, key.id, lastCharge);
    if (key.accountSpendCaps) await setCapCounted(client, key.accountId, lastCharge);
  }
  let next = 0;
  return decisions.map((decision): DebitResult => {
    if (decision.outcome === 'charged') return { outcome: 'charged', balance: decision.balance, chargeId: chargeIds[next++] as number };
    return decision.outcome === 'capped' ? { outcome: 'capped', balance: after, reached: decision.reached } : refusalFor('active');
  });
}

/**
 * Adds to a holder's periods the charges its spend does not count yet: those made through an
 * instance that did not know of its caps yet (it knows a key as of at most a second ago). The
 * account's row, held by the caller, orders them: any later charge has a later id.
 */
async function foldUncounted(client: PoolClient, holder: CapHolder, holderId: string, caps: SpendCap[] | null, at: number): Promise<void> {
  if (!caps || caps.length === 0) return;
  const { table, column } = SPEND_TABLES[holder];
  const starts = periodStarts(at);
  const scope = holder === 'key' ? 'key_id = $1' : 'key_id IN (SELECT id FROM keys WHERE account_id = $1)';
  const { rows } = await client.query<{ last: string | null; day: string; week: string; month: string }>(
    `SELECT max(id) AS last, coalesce(sum(credits) FILTER (WHERE at >= $2), 0) AS day,
       coalesce(sum(credits) FILTER (WHERE at >= $3), 0) AS week, coalesce(sum(credits) FILTER (WHERE at >= $4), 0) AS month
     FROM charges WHERE ${scope} AND id > coalesce((SELECT charge_id FROM cap_counted WHERE holder_id = $1), 0)`,
    [holderId, starts.day, starts.week, starts.month],
  );
  const uncounted = rows[0];
  if (!uncounted || uncounted.last === null) return;
  for (const period of capPeriods(caps, at)) {
    const spent = Number(uncounted[period.cap.interval]);
    if (spent === 0) continue;
    await client.query(
      `INSERT INTO ${table} (${column}, interval, period_start, spent) VALUES ($1, $2, $3, $4)
       ON CONFLICT (${column}, interval, period_start) DO UPDATE SET spent = ${table}.spent + excluded.spent`,
      [holderId, period.cap.interval, period.start, spent],
    );
  }
  await setCapCounted(client, holderId, Number(uncounted.last));
}

async function setCapCounted(client: PoolClient, holderId: string, chargeId: number): Promise<void> {
  await client.query(
    `INSERT INTO cap_counted (holder_id, charge_id) VALUES ($1, $2)
     ON CONFLICT (holder_id) DO UPDATE SET charge_id = greatest(cap_counted.charge_id, excluded.charge_id)`,
    [holderId, chargeId],
  );
}

/**
 * Counts a holder's current periods anew from its charges, for caps just set: what it spent
 * before them counts toward them. Caps removed forget what was counted.
 */
export async function recountCaps(client: PoolClient, holder: CapHolder, holderId: string, caps: SpendCap[] | null, now: number): Promise<void> {
  await client.query('DELETE FROM cap_counted WHERE holder_id = $1', [holderId]);
  if (!caps || caps.length === 0) return;
  const { table, column } = SPEND_TABLES[holder];
  for (const period of capPeriods(caps, now)) {
    await client.query(`UPDATE ${table} SET spent = 0 WHERE ${column} = $1 AND interval = $2 AND period_start = $3`, [
      holderId,
      period.cap.interval,
      period.start,
    ]);
  }
  await foldUncounted(client, holder, holderId, caps, now);
}

/** A holder's caps' current periods, with what each spent so far and whether credits.cap_reached was sent. */
async function capPeriodStates(
  client: PoolClient,
  holder: CapHolder,
  holderId: string,
  caps: SpendCap[] | null,
  at: number,
): Promise<CapPeriodState[]> {
  const { table, column } = SPEND_TABLES[holder];
  const states: CapPeriodState[] = [];
  for (const period of capPeriods(caps ?? [], at)) {
    const { rows } = await client.query<{ spent: number; cap_reached_sent: boolean }>(
      `SELECT spent, cap_reached_sent FROM ${table} WHERE ${column} = $1 AND interval = $2 AND period_start = $3`,
      [holderId, period.cap.interval, period.start],
    );
    states.push({ ...period, holder, spent: Number(rows[0]?.spent ?? 0), sent: rows[0]?.cap_reached_sent === true });
  }
  return states;
}

/** The id a holder's spend is counted under: the key's, or its account's. */
function holderIdOf(key: KeyRecord, holder: CapHolder): string {
  return holder === 'key' ? key.id : key.accountId;
}
