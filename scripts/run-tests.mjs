// Runs every test file under test/ with Node's test runner. Node 20 neither expands globs nor
// finds .ts files by itself, so the files are listed here explicitly. With TEST_DATABASE_URL set,
// the HTTP contract suites (test/http/routes, test/http/admin, test/http/portal, test/app.test.ts) run
// a second time on PostgreSQL.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [relative(process.cwd(), path)] : [];
  });
}

// Files run as many at a time as there are cores: Node's default, one fewer, runs one file at a time
// on 2 cores and leaves the other idle. On 2 cores the whole run took 9 minutes one at a time, 5.5
// two at a time, and 12 three at a time (its timing tests then failed too).
const concurrency = `--test-concurrency=${availableParallelism()}`;

function run(label, files, env) {
  console.log(`\n== ${label}: ${files.length} test files`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', concurrency, '--test-reporter=spec', ...process.argv.slice(2), ...files], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return result.status ?? 1;
}

// The console's browser and HTTP tests run against what its sources build now.
if (spawnSync(process.execPath, ['scripts/build-console.mjs'], { stdio: 'inherit' }).status !== 0) process.exit(1);

const files = testFiles('test').sort();
if (files.length === 0) {
  console.error('no test files found under test/');
  process.exit(1);
}
const httpContract = files.filter(
  (file) =>
    file.startsWith(join('test', 'http', 'routes')) ||
    file.startsWith(join('test', 'http', 'admin')) ||
    file.startsWith(join('test', 'http', 'portal')) ||
    file === join('test', 'app.test.ts'),
);

let status = run('whole suite (SQLite store; PostgreSQL tests need TEST_DATABASE_URL)', files, {});
if (process.env.TEST_DATABASE_URL) {
  status ||= run('HTTP contract suites again, on PostgreSQL', httpContract, { TEST_STORE: 'postgres' });
} else {
  console.log(
    '\nSKIPPED: TEST_DATABASE_URL is not set, so the PostgreSQL store contract, the HTTP contract on PostgreSQL and the\n' +
      'multi-instance and fault tests did not run. Set it (for example postgres://postgres@127.0.0.1:5432/test) to run them.',
  );
}
if (!process.env.TEST_REDIS_URL) {
  console.log(
    '\nSKIPPED: TEST_REDIS_URL is not set, so the rate-limit tests over a real Redis (limits shared across instances) did not\n' +
      'run. Set it (for example redis://127.0.0.1:6379) to run them.',
  );
}
process.exit(status);
