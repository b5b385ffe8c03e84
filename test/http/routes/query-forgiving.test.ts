import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DocumentRecord } from '../../../src/documents/document-store.js';
import { ENGLISH } from '../../../src/search/engine/languages.js';
import { createTestApp, json, type TestContext } from '../../support/helper.js';
import { pagedRanking } from '../../support/paged-ranking.js';
import { random } from '../../support/random.js';

const stemOf = (word: string) => ENGLISH.stem(word);

// Families sharing a beginning (riv-, lant-, glac-), words one edit apart (river, rivet), a long
// word for two edits, and words with other stems (studies, stony).
const WORDS = ['river', 'rivet', 'riviera', 'lantern', 'lanterns', 'glacier', 'glacial', 'harbourmaster', 'studies', 'stony', 'copper', 'falcon'];

function corpus(): DocumentRecord[] {
  const next = random(23);
  const pick = () => WORDS[Math.floor(next() ** 1.3 * WORDS.length)] as string;
  return Array.from({ length: 200 }, (_, index) => ({
    docId: `d${String(index).padStart(3, '0')}`,
    title: Array.from({ length: 1 + Math.floor(next() * 3) }, pick).join(' '),
    text: Array.from({ length: 2 + Math.floor(next() * 7) }, pick).join(' '),
    metadata: { court: next() < 0.5 ? 'Riverside Court' : 'Lantern Hall' },
  }));
}

describe('POST /query with prefixes and typos, against a reading of the documents', () => {
  const documents = corpus();
  const stemsIn = (text: string) => text.toLowerCase().split(/\s+/).map(stemOf);
  const holding = (test: (stem: string) => boolean, field: 'title' | 'text' | 'all' = 'all') =>
    documents
      .filter((document) => stemsIn(field === 'all' ? `${document.title} ${document.text}` : document[field]).some(test))
      .map((document) => document.docId);
  let context: TestContext;
  let key: string;
  before(async () => {
    context = await createTestApp({ documents });
    key = await context.createKey(100_000);
  });
  after(() => context.close());

  const ranking = (body: Record<string, unknown>) => pagedRanking(context, key, body);
  const query = async (body: Record<string, unknown>) => {
    const response = await context.app.inject({ method: 'POST', url: '/query', headers: { 'x-api-key': key }, payload: body });
    return { status: response.statusCode, body: json(response) };
  };

  it('word*: every document holding a word that begins so after stemming, ranked as the query of those words', async () => {
    for (const prefix of ['riv', 'lant', 'glac', 'stud', 'ston', 'co']) {
      const found = await ranking({ query: `${prefix}*` });
      assert.deepEqual(new Set(found.ids), new Set(holding((stem) => stem.startsWith(prefix))), prefix);
      const expanded = WORDS.filter((word) => stemOf(word).startsWith(prefix)).join(' ');
      assert.deepEqual(found, await ranking({ query: expanded }), `${prefix}* ranks as "${expanded}"`);
    }
    assert.deepEqual(await ranking({ query: 'zebr*' }), { total: 0, ids: [] });
    // A word typed whole, or into the ending its stem changes, finds itself.
    for (const word of ['stony', 'studies', 'studie', 'glacier']) {
      const found = new Set((await ranking({ query: `${word}*` })).ids);
      for (const docId of holding((stem) => WORDS.some((each) => each.startsWith(word) && stemOf(each) === stem)))
        assert.ok(found.has(docId), `${word}*: ${docId}`);
    }
    const inTitle = await ranking({ query: { prefix: { title: 'riv' } } });
    assert.deepEqual(new Set(inTitle.ids), new Set(holding((stem) => stem.startsWith('riv'), 'title')));
    assert.deepEqual(inTitle, await ranking({ query: { match: { title: 'river rivet riviera' } } }));
    const inCourt = await ranking({ query: { prefix: { court: { value: 'Rive' } } } });
    assert.deepEqual(
      new Set(inCourt.ids),
      new Set(documents.filter((document) => document.metadata.court === 'Riverside Court').map((document) => document.docId)),
    );
    // Beside a phrase (the clause path), a prefix matches and ranks alike.
    const beside = await ranking({ query: '"copper falcon" riv*' });
    const phrase = await ranking({ query: '"copper falcon"' });
    assert.deepEqual(new Set(beside.ids), new Set([...phrase.ids, ...holding((stem) => stem.startsWith('riv'))]));
  });

  it('a prefix beside words adds to their scores; prefix: true makes the last word one', async () => {
    const mixed = await ranking({ query: 'copper lant*' });
    assert.deepEqual(new Set(mixed.ids), new Set(holding((stem) => stem === 'copper' || stem.startsWith('lant'))));
    assert.deepEqual(await ranking({ query: 'copper lant', prefix: true }), mixed);
    assert.deepEqual(await ranking({ query: 'copper lant', prefix: false }), await ranking({ query: 'copper lant' }));
    // One character is no prefix: the word as it is.
    assert.deepEqual(await ranking({ query: 'copper l', prefix: true }), await ranking({ query: 'copper l' }));
    const every = await ranking({ query: 'copper lant*', operator: 'and' });
    assert.deepEqual(
      new Set(every.ids),
      new Set(holding((stem) => stem === 'copper').filter((id) => holding((stem) => stem.startsWith('lant')).includes(id))),
    );
  });

  it('typos auto: a word no document holds matches the words an edit from it, says so, and marks them', async () => {
    const { body } = await query({ query: 'glaceir', highlight: true, top_k: 3 });
    assert.deepEqual(body.resp.body.corrected, { glaceir: ['glacier'] });
    assert.match(body.resp.body.hits.documents[0].highlights.text + body.resp.body.hits.documents[0].highlights.title, /<mark>glacier<\/mark>/);
    assert.deepEqual(await ranking({ query: 'glaceir' }), await ranking({ query: 'glacier' }));
    assert.deepEqual(await ranking({ query: 'copper glaceir', operator: 'and' }), await ranking({ query: 'copper glacier', operator: 'and' }));
    // Nine characters and more: two edits.
    const long = await query({ query: 'harbormastr', top_k: 1 });
    assert.deepEqual(long.body.resp.body.corrected, { harbormastr: ['harbourmast'] });
    // A word longer than any word is matched as it is, however many edits are allowed.
    const huge = await query({ query: `${'glacier'.repeat(3000)} copper`, typos: 2, top_k: 1 });
    assert.equal(huge.status, 200);
    assert.equal(huge.body.resp.body.corrected, undefined);
    // Four characters: too short for auto; 0: no typos at all.
    assert.equal((await ranking({ query: 'rivr' })).total, 0);
    assert.equal((await ranking({ query: 'glaceir', typos: 0 })).total, 0);
    // A word that matches ranks exactly as without typos, and nothing is said.
    const exact = await query({ query: 'river copper', top_k: 50 });
    assert.equal(exact.body.resp.body.corrected, undefined);
    assert.deepEqual(exact.body, (await query({ query: 'river copper', top_k: 50, typos: 0 })).body);
  });

  it('typos 1: a word matches the words an edit away too, its own matches ranked first', async () => {
    const found = await ranking({ query: 'river', typos: 1 });
    const own = holding((stem) => stem === 'river');
    const near = holding((stem) => stem === 'rivet').filter((id) => !own.includes(id));
    assert.deepEqual(new Set(found.ids.slice(0, own.length)), new Set(own), 'the word itself first');
    assert.deepEqual(new Set(found.ids.slice(own.length)), new Set(near), 'then its typos');
    const { body } = await query({ query: 'river', typos: 1 });
    assert.deepEqual(body.resp.body.corrected, { river: ['rivet'] });
    assert.deepEqual(
      await ranking({ query: { fuzzy: { text: { value: 'river', fuzziness: 1 } } } }),
      await ranking({ query: { match: { text: { query: 'river', fuzziness: 1 } } } }),
    );
    assert.deepEqual(new Set((await ranking({ query: { fuzzy: { text: 'glaceir' } } })).ids), new Set(holding((stem) => stem === 'glacier', 'text')));
  });

  it('refuses bad typos, fuzziness and prefix options with a 400 naming them, and charges nothing', async () => {
    const before = await context.balanceOf(key);
    for (const [body, named] of [
      [{ query: 'river', typos: 3 }, /typos/],
      [{ query: 'river', typos: 'some' }, /typos/],
      [{ query: 'river', prefix: 'yes' }, /prefix/],
      [{ query: { match: { text: { query: 'river', fuzziness: 5 } } } }, /fuzziness/],
      [{ query: { prefix: { text: 'two words' } } }, /prefix/],
      [{ query: { fuzzy: { text: { value: 'river', distance: 1 } } } }, /distance/],
    ] as const) {
      const answer = await query(body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.match(JSON.stringify(answer.body), named);
    }
    assert.equal(await context.balanceOf(key), before);
  });
});
