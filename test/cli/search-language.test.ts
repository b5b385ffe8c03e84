import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ChildServer, spawnServer } from '../support/child-server.js';
import { tempDir } from '../support/helper.js';

async function waitFor(output: () => string, pattern: RegExp): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const match = pattern.exec(output());
    if (match) return match[0];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never logged ${pattern}:\n${output()}`);
}

describe('SEARCH_LANGUAGE across starts', () => {
  it('a start after a change analyses the documents without a language again, and says how many', async () => {
    const dir = tempDir();
    const started: ChildServer[] = [];
    const spawn = async (env: Record<string, string>) => {
      const server = await spawnServer({ DATA_DIR: dir.path, LOG_LEVEL: 'info', ...env });
      started.push(server);
      return server;
    };
    try {
      // The demo corpus: 50 documents without a language, 5 with their own.
      const english = await spawn({ SEED_DEMO: 'true' });
      await waitFor(english.output, /search index (read from disk|built from the stored documents)/);
      assert.doesNotMatch(english.output(), /SEARCH_LANGUAGE is now/);
      english.child.kill('SIGTERM');
      assert.equal(await english.exited, 0);

      const german = await spawn({ SEARCH_LANGUAGE: 'de' });
      await waitFor(german.output, /SEARCH_LANGUAGE is now de \(was en\): 50 documents without a language of their own were analysed again/);
      german.child.kill('SIGTERM');
      assert.equal(await german.exited, 0);

      const again = await spawn({ SEARCH_LANGUAGE: 'de' });
      await waitFor(again.output, /search index (read from disk|built from the stored documents)/);
      assert.doesNotMatch(again.output(), /SEARCH_LANGUAGE is now/, 'said once, on the start after the change');
      again.child.kill('SIGTERM');
      assert.equal(await again.exited, 0);
    } finally {
      for (const server of started) if (server.child.exitCode === null) server.child.kill('SIGKILL');
      dir.remove();
    }
  });

  it('refuses to start with a language it does not analyse, naming the ones it does', async () => {
    const dir = tempDir();
    try {
      await assert.rejects(spawnServer({ DATA_DIR: dir.path, SEARCH_LANGUAGE: 'klingon' }), /SEARCH_LANGUAGE must be one of da, de, en/);
    } finally {
      dir.remove();
    }
  });
});
