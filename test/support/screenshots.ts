import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where a browser test writes its screenshots: a temporary folder, so that a test run leaves the
 * tree as it was; `npm run screenshots` sets SCREENSHOTS_DIR=docs to refresh the docs' pictures.
 */
export function screenshotDir(page: 'console' | 'portal'): string {
  const root = process.env.SCREENSHOTS_DIR;
  if (!root) return mkdtempSync(join(tmpdir(), `metered-search-${page}-shots-`));
  const dir = join(root, page);
  mkdirSync(dir, { recursive: true });
  return dir;
}
