import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { canReleaseFreedMemory } from '../../../../src/search/engine/threads/release-memory.js';

const onGlibc = Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);

interface Measured {
  collected: number;
  released: boolean;
  afterRelease: number;
  beforeCollection: number;
  afterCollection: number;
  beforeBackground: number;
  releasedInBackground: boolean;
  afterBackground: number;
}

/** Why the test cannot run here, if it cannot. */
function missing(): string | false {
  if (!onGlibc) return 'the C library is not glibc: malloc_trim does not exist here';
  if (!canReleaseFreedMemory) return 'the optional malloc_trim addon is not built (npm run build:native)';
  return false;
}

describe('giving freed memory back to the system', { skip: missing() }, () => {
  it('returns what collected typed arrays freed, at once, after the next full collection, or on the thread pool', () => {
    const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/fixtures/memory/fragment-and-release.ts'], {
      encoding: 'utf8',
    });
    const measured = JSON.parse(output) as Measured;
    // 256 MiB were freed each time; glibc keeps them resident until trimmed.
    assert.equal(measured.released, true, 'the malloc_trim addon is built and gave memory back');
    assert.ok(measured.collected - measured.afterRelease > 128, `RSS ${measured.collected} -> ${measured.afterRelease} MiB`);
    assert.ok(measured.beforeCollection - measured.afterCollection > 128, `RSS ${measured.beforeCollection} -> ${measured.afterCollection} MiB`);
    assert.equal(measured.releasedInBackground, true, 'the background release resolves with what malloc_trim answered');
    assert.ok(measured.beforeBackground - measured.afterBackground > 128, `RSS ${measured.beforeBackground} -> ${measured.afterBackground} MiB`);
  });
});
