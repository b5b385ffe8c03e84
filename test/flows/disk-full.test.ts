import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { hashApiKey } from '../../src/billing/keys.js';
import type { DebitResult } from '../../src/billing/ledger.js';
import { auditLedger } from '../../src/cli/commands/audit.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { spawnServer } from '../support/child-server.js';

/** A real, tiny filesystem for the data folder; mounting needs root, as on the CI machine. */
function mountTinyFilesystem(): { path: string; unmount: () => void } | string {
  const path = mkdtempSync(join(tmpdir(), 'ms-tinyfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', path], { stdio: 'pipe' });
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    return `cannot mount a tmpfs here (${(error as Error).message.split('\n')[0]})`;
  }
  return {
    path,
    unmount: () => {
      execFileSync('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Fills the filesystem to the last byte, so the store's next growth fails with ENOSPC. */
function fill(path: string): string {
  const filler = join(path, 'filler');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  for (let size = chunk.length; size >= 512; ) {
    try {
      writeFileSync(filler, chunk.subarray(0, size), { flag: 'a' });
      written += size;
    } catch {
      size = size / 2;
    }
  }
  assert.ok(written > 0);
  return filler;
}

const tiny = mountTinyFilesystem();

describe('disk full under the data folder', { skip: typeof tiny === 'string' ? tiny : false }, () => {
  const fs = tiny as { path: string; unmount: () => void };
  after(() => fs.unmount());

  it('keeps request outcomes that cannot be written while full, and writes them once space returns', async () => {
    const dataDir = join(fs.path, 'outcomes');
    mkdirSync(dataDir);
    const store = new SqliteStore(dataDir);
    try {
      const created = await new KeyAdmin(store.ledger).create(100, 'outcomes');
      const charges: DebitResult[] = [];
      for (let i = 0; i < 3; i++) charges.push(await store.ledger.debit(hashApiKey(created.key), '/query'));
      const filler = fill(fs.path);
      let refused: unknown;
      // Charges of a full ledger fail; the outcomes recorded meanwhile must outlive the failures.
      for (let i = 0; i < 200 && refused === undefined; i++)
        await store.ledger.debit(hashApiKey(created.key), '/query').catch((error: unknown) => (refused = error));
      assert.ok(refused, 'the full disk was noticed');
      for (const charge of charges) if (charge.outcome === 'charged') store.ledger.recordOutcome(charge.chargeId, 200);
      // The flush timer fires into the full disk: it must neither throw (an uncaught error would
      // end this process) nor drop the outcomes.
      await new Promise((resolve) => setTimeout(resolve, 200));
      rmSync(filler);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const listed = await store.ledger.listCharges(created.record.id, 1000);
      const recorded = listed.filter((charge) => charges.some((made) => made.outcome === 'charged' && made.chargeId === charge.id));
      assert.equal(recorded.length, 3);
      assert.deepEqual(
        recorded.map((charge) => charge.outcomeStatus),
        [200, 200, 200],
      );
    } finally {
      await store.close();
    }
  });

  it('answers clean 503 envelopes while full, recovers when space returns, and the ledger stays exact', async () => {
    const STARTING = 1_000_000;
    const dataDir = join(fs.path, 'data');
    mkdirSync(dataDir);
    const seed = new SqliteStore(dataDir);
    const created = await new KeyAdmin(seed.ledger).create(STARTING, 'disk-full');
    await seed.close();

    const server = await spawnServer({ DATA_DIR: dataDir });
    const agent = new Agent({ connections: 16 });
    const statuses = new Map<number, number>();
    let served = 0;
    const burst = async (count: number) => {
      const seen: number[] = [];
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = 0; i < count / 16; i++) {
            const response = await request(`${server.url}/query`, {
              dispatcher: agent,
              method: 'POST',
              headers: { 'x-api-key': created.key, 'content-type': 'application/json' },
              body: '{"query":"disk full"}',
            });
            const body = (await response.body.json()) as { status?: number; message?: string };
            statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
            seen.push(response.statusCode);
            if (response.statusCode === 200) served++;
            else {
              assert.equal(response.statusCode, 503, `only 503 while full, got ${response.statusCode}: ${JSON.stringify(body)}`);
              assert.equal(body.status, 503);
              assert.match(body.message!, /storage|store|retry/i);
              assert.ok(response.headers['retry-after'], 'a 503 says when to retry');
            }
          }
        }),
      );
      return seen;
    };

    try {
      await burst(320);
      const filler = fill(fs.path);
      let refused = 0;
      for (let round = 0; round < 40 && refused === 0; round++) {
        refused = (await burst(800)).filter((status) => status === 503).length;
      }
      assert.ok(refused > 0, `the full disk was noticed (answers: ${JSON.stringify([...statuses])})`);

      rmSync(filler);
      let recovered = false;
      for (let round = 0; round < 50 && !recovered; round++) {
        recovered = (await burst(64)).every((status) => status === 200);
      }
      assert.ok(recovered, 'all requests succeed again once space returns, without a restart');
      assert.equal(server.child.exitCode, null, 'the process never exited');
    } finally {
      await agent.close();
      server.child.kill('SIGTERM');
      await server.exited;
    }
    assert.doesNotMatch(server.output(), /unexpected error|uncaught|unhandled/i);

    const store = new SqliteStore(dataDir);
    try {
      const key = (await store.ledger.findKeyById(created.record.id))!;
      const charges = await store.ledger.countCharges(key.id);
      assert.equal(key.balance + charges, STARTING, `balance ${key.balance} + charges ${charges}`);
      assert.equal(charges, served, 'exactly the served requests were charged: none lost, none for a refused request');
      assert.equal((await auditLedger(store)).consistent, true, 'metered-search audit finds the ledger consistent');
    } finally {
      await store.close();
    }
  });
});
