import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { corpusMigrations } from '../../src/corpus/corpus-schema.js';
import { INDEX_UPKEEP, SqliteCorpus } from '../../src/corpus/sqlite-corpus.js';
import type { DocumentRecord } from '../../src/documents/document-store.js';
import { type Language, languageNamed } from '../../src/search/engine/languages.js';
import { documentsOf, tempDir } from '../support/helper.js';

const GERMAN = languageNamed('de') as Language;

const DOCUMENTS: DocumentRecord[] = [
  { docId: 'plain', title: 'Verträgen', text: 'Ohne eigene Sprache.', metadata: {} },
  { docId: 'french', title: 'Données personnelles', text: 'Le règlement.', metadata: { language: 'fr' } },
  { docId: 'english', title: 'Running contracts', text: 'The runner.', metadata: { language: 'en' } },
];

const open = (dir: string, language?: Language) => new SqliteCorpus(dir, INDEX_UPKEEP, undefined, undefined, undefined, language);

async function found(corpus: SqliteCorpus, terms: string[], language: string): Promise<string[]> {
  const result = await corpus.search({ terms, field: { kind: 'all' }, filters: [], topK: 10, typos: 0, language });
  return result.hits.map((hit) => hit.docId).sort();
}

describe('the corpus language (SEARCH_LANGUAGE)', () => {
  it('analyses the documents without a language of their own again when it changes, and says so once', async () => {
    const dir = tempDir();
    try {
      const english = open(dir.path);
      await english.ingestDocuments(documentsOf(DOCUMENTS));
      assert.equal(english.languageChange(), undefined);
      assert.deepEqual(await found(english, ['vertrag'], 'de'), [], 'English leaves "vertragen" as it is');
      assert.deepEqual(await found(english, ['donnee'], 'fr'), ['french']);
      await english.close();

      const german = open(dir.path, GERMAN);
      assert.deepEqual(german.languageChange(), { from: 'en', to: 'de', documents: 1 });
      assert.deepEqual(await found(german, ['vertrag'], 'de'), ['plain']);
      assert.deepEqual(await found(german, ['donnee'], 'fr'), ['french'], 'a document in its own language keeps its analysis');
      assert.deepEqual(await found(german, ['running'], 'en'), ['english']);
      await german.close();

      const again = open(dir.path, GERMAN);
      assert.equal(again.languageChange(), undefined);
      assert.deepEqual(await found(again, ['vertrag'], 'de'), ['plain'], 'the index read back holds the German analysis');
      await again.close();
    } finally {
      dir.remove();
    }
  });

  it('upgrades a corpus whose documents carried a language while everything was analysed in English', async () => {
    const dir = tempDir();
    try {
      const written = open(dir.path);
      await written.ingestDocuments(documentsOf(DOCUMENTS));
      await written.close();
      // A corpus from before languages: no corpus_analysis, and term vectors that are not these
      // documents' (empty here), so that a document analysed again is told apart.
      const old = new Database(join(dir.path, 'corpus.sqlite'));
      const beforeLanguages = corpusMigrations.findIndex((migration) => migration.includes('CREATE TABLE corpus_analysis'));
      old.exec(`DROP TABLE corpus_analysis; UPDATE documents SET terms = x'', title_length = 0, text_length = 0`);
      old.pragma(`user_version = ${beforeLanguages}`);
      old.close();
      const upgraded = open(dir.path);
      assert.deepEqual(await found(upgraded, ['donnee'], 'fr'), ['french'], 'the French document is analysed again, in French');
      assert.deepEqual(await found(upgraded, ['running'], 'en'), [], 'documents in English are left as they were');
      await upgraded.close();
    } finally {
      dir.remove();
    }
  });
});
