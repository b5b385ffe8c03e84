import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';

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

describe('giving freed memory back to the system', { skip: onGlibc ? false : 'the C library is not glibc: malloc_trim does not exist here' }, () => {
  it('returns what collected typed arrays freed, at once, after the next full collection, or on the thread pool', () => {
    const output = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/fixtures/memory/fragment-and-release.ts'], { encoding: 'utf8' });
    const measured = JSON.parse(output) as Measured;
    // 256 MiB were freed each time; glibc keeps them resident until trimmed.
    assert.equal(measured.released, true, 'the malloc_trim addon is built and gave memory back');
    assert.ok(measured.collected - measured.afterRelease > 128, `RSS ${measured.collected} -> ${measured.afterRelease} MiB`);
    assert.ok(measured.beforeCollection - measured.afterCollection > 128, `RSS ${measured.beforeCollection} -> ${measured.afterCollection} MiB`);
    assert.equal(measured.releasedInBackground, true, 'the background release resolves with what malloc_trim answered');
    assert.ok(measured.beforeBackground - measured.afterBackground > 128, `RSS ${measured.beforeBackground} -> ${measured.afterBackground} MiB`);
  });
});
