import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { BuildFigures, FacetCounts, Fields, Peer } from './peer.js';

const PYTHON = '/usr/bin/python3';
const DRIVER = fileURLToPath(new URL('./xapian-peer.py', import.meta.url));

/** Whether Debian's python3-xapian is installed; the reason when not. */
export function xapianMissing(): string | undefined {
  const probe = spawnSync(PYTHON, ['-c', 'import xapian; print(xapian.version_string())'], { encoding: 'utf8' });
  return probe.status === 0
    ? undefined
    : `Xapian is not installed (apt-get install python3-xapian): ${(probe.stderr || String(probe.error)).trim().split('\n').pop()}`;
}

export function xapianVersion(): string {
  return spawnSync(PYTHON, ['-c', 'import xapian; print(xapian.version_string())'], { encoding: 'utf8' }).stdout.trim();
}

/**
 * Xapian through its Python bindings, in a process of its own (bench/peers/xapian-peer.py): BM25
 * (k1 1.2, b 0.75), the English stemmer, title words at twice the weight; every time measured
 * inside that process, so the pipe between the two costs nothing measured.
 */
export class XapianPeer implements Peer {
  readonly name = 'Xapian';
  private readonly child: ChildProcess;
  private readonly lines: Interface;
  private readonly waiting: Array<(line: string) => void> = [];

  constructor(
    private readonly folder: string,
    stopwords: readonly string[],
  ) {
    this.child = spawn(PYTHON, [DRIVER], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.child.stdout! });
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
    void this.ask({ op: 'stopwords', words: [...stopwords] });
  }

  private ask<T>(command: Record<string, unknown>): Promise<T> {
    return new Promise((resolve) => {
      this.waiting.push((line) => resolve(JSON.parse(line) as T));
      this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    });
  }

  build(path: string, fields: Fields): Promise<BuildFigures> {
    return this.ask({ op: 'build', path, db: join(this.folder, 'xapian'), ...fields });
  }

  time(queries: string[], options: { k: number; exactTotals: boolean; passes: number }) {
    return this.ask<{ ms: number[]; totals: number[] }>({ op: 'time', queries, k: options.k, exact: options.exactTotals, passes: options.passes });
  }

  async rank(queries: string[], k: number): Promise<string[][]> {
    return (await this.ask<{ ids: string[][] }>({ op: 'rank', queries, k })).ids;
  }

  facets(queries: string[], options: { k: number; fields: string[]; passes: number }) {
    return this.ask<{ ms: number[]; counts: FacetCounts[] }>({ op: 'facets', queries, k: options.k, fields: options.fields, passes: options.passes });
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    this.lines.close();
    if (this.child.exitCode === null) await new Promise((resolve) => this.child.once('exit', resolve));
  }
}
