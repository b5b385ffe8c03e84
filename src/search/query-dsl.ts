import { analyze } from './analyzer.js';
import type { FilterRange, FilterScalar, QueryClause, QueryField, Typos } from './document-index.js';
import { forEachToken } from './engine/analysis.js';
import type { Language } from './engine/languages.js';
import { phraseWords } from './phrase.js';
import { parseQueryText, prefixTokens } from './query-text.js';

/** Clauses one query may hold in all, nested ones included: bounds the work one request causes. */
export const MAX_CLAUSES = 32;

/** A query object read: its clause tree, or what is wrong with it, naming the clause or option. */
export type ReadQuery = { clause: QueryClause } | { error: string };

type Json = unknown;

class DslError extends Error {}

/**
 * Reads an object form of `query` (a subset of Elasticsearch's query DSL: match, match_phrase,
 * multi_match, bool, term, terms, range, exists, ids, match_all, prefix, fuzzy) into a clause tree, its words
 * analysed as the index analyses them, in the query's language.
 */
export function readQueryObject(query: Json, language: Language): ReadQuery {
  const budget = { left: MAX_CLAUSES, language };
  try {
    return { clause: clauseOf(query, 'query', budget) };
  } catch (error) {
    if (error instanceof DslError) return { error: error.message };
    throw error;
  }
}

/** Query text in a field as a clause: its words, phrases, prefixes and exclusions (see parseQueryText). */
export function textClause(text: string, field: QueryField, operator: 'or' | 'and', language: Language, boost = 1, typos?: Typos): QueryClause {
  const parsed = parseQueryText(text);
  const words: QueryClause = {
    kind: 'words',
    field,
    terms: analyze(parsed.wanted, language),
    operator,
    boost,
    ...(typos === undefined ? {} : { typos }),
  };
  const phrases = parsed.phrases.map((phrase): QueryClause => ({ kind: 'phrase', field, words: phraseWords(phrase, language), boost }));
  const prefixes = parsed.prefixes.flatMap((prefix) => prefixClauses(prefix, field, boost));
  const mustNot = [
    ...(parsed.excluded ? [{ kind: 'words', field, terms: analyze(parsed.excluded, language), operator: 'or', boost: 0 } as QueryClause] : []),
    ...parsed.excludedPhrases.map((phrase): QueryClause => ({ kind: 'phrase', field, words: phraseWords(phrase, language), boost: 0 })),
  ];
  const wanted = [
    ...(words.terms.length > 0 ? [words] : []),
    ...phrases.filter((phrase) => phrase.kind === 'phrase' && phrase.words.length > 0),
    ...prefixes,
  ];
  // Only exclusions: every other document matches, as in Meilisearch.
  if (wanted.length === 0 && mustNot.length > 0) return bool({ must: [{ kind: 'every' }], mustNot });
  if (wanted.length === 1 && mustNot.length === 0) return wanted[0];
  return operator === 'and' ? bool({ must: wanted, mustNot }) : bool({ should: wanted, mustNot, minimumShould: 1 });
}

/** A prefix of the text as clauses: its last token the prefix, any token before it a word (see prefixTokens). */
function prefixClauses(text: string, field: QueryField, boost: number): QueryClause[] {
  const { words, prefix } = prefixTokens(text);
  if (prefix === undefined) return [];
  const before: QueryClause[] = words.length > 0 ? [{ kind: 'words', field, terms: words, operator: 'or', boost }] : [];
  return [...before, { kind: 'prefix', field, prefix, boost }];
}

function bool(parts: Partial<Extract<QueryClause, { kind: 'bool' }>>): QueryClause {
  return { kind: 'bool', must: [], should: [], mustNot: [], filter: [], minimumShould: 0, boost: 1, ...parts };
}

/** What reading a query carries along: the clauses it may still hold, and the language its words are read in. */
type Budget = { left: number; language: Language };

const CLAUSES: Record<string, (body: Json, at: string, budget: Budget) => QueryClause> = {
  match: (body, at, { language }) => {
    if (typeof body === 'string') return textClause(text(body, at), { kind: 'all' }, 'or', language);
    const [field, value] = oneField(body, at);
    if (typeof value === 'string') return textClause(text(value, `${at}.${field}`), fieldOf(field), 'or', language);
    const options = object(value, `${at}.${field}`, ['query', 'operator', 'boost', 'fuzziness']);
    const operator = options.operator === undefined ? 'or' : oneOf(options.operator, ['or', 'and'], `${at}.${field}.operator`);
    const typos = fuzzinessOf(options.fuzziness, `${at}.${field}.fuzziness`);
    return textClause(text(options.query, `${at}.${field}.query`), fieldOf(field), operator, language, boostOf(options.boost, at), typos);
  },
  prefix: (body, at) => {
    const [field, value] = oneField(body, at);
    const options = typeof value === 'string' ? { value } : object(value, `${at}.${field}`, ['value', 'boost']);
    const tokens: string[] = [];
    forEachToken(text(options.value, `${at}.${field}.value`), (token) => tokens.push(token));
    if (tokens.length !== 1) throw new DslError(`${at}.${field} must be the beginning of one word (letters and digits), such as "prot".`);
    return { kind: 'prefix', field: fieldOf(field), prefix: tokens[0], boost: boostOf(options.boost, at) };
  },
  fuzzy: (body, at, { language }) => {
    const [field, value] = oneField(body, at);
    const options = typeof value === 'string' ? { value } : object(value, `${at}.${field}`, ['value', 'fuzziness', 'boost']);
    const words = analyze(text(options.value, `${at}.${field}.value`), language);
    const typos = fuzzinessOf(options.fuzziness, `${at}.${field}.fuzziness`) ?? 'auto';
    return { kind: 'words', field: fieldOf(field), terms: words, operator: 'or', boost: boostOf(options.boost, at), typos };
  },
  match_phrase: (body, at, { language }) => {
    const [field, value] = oneField(body, at);
    const options = typeof value === 'string' ? { query: value } : object(value, `${at}.${field}`, ['query', 'boost']);
    return {
      kind: 'phrase',
      field: fieldOf(field),
      words: phraseWords(text(options.query, `${at}.${field}.query`), language),
      boost: boostOf(options.boost, at),
    };
  },
  multi_match: (body, at, { language }) => {
    const options = object(body, at, ['query', 'fields', 'type', 'operator', 'boost', 'fuzziness']);
    const query = text(options.query, `${at}.query`);
    const fields =
      options.fields === undefined
        ? ['title', 'text']
        : list(options.fields, `${at}.fields`).map((name, index) => text(name, `${at}.fields[${index}]`));
    const type = options.type === undefined ? 'best_fields' : oneOf(options.type, ['best_fields', 'most_fields', 'phrase'], `${at}.type`);
    const operator = options.operator === undefined ? 'or' : oneOf(options.operator, ['or', 'and'], `${at}.operator`);
    const boost = boostOf(options.boost, at);
    const typos = fuzzinessOf(options.fuzziness, `${at}.fuzziness`);
    const perField = fields.map((spec): QueryClause => {
      const [name, weight] = boostedField(spec, `${at}.fields`);
      if (type === 'phrase') return { kind: 'phrase', field: fieldOf(name), words: phraseWords(query, language), boost: boost * weight };
      return textClause(query, fieldOf(name), operator, language, boost * weight, typos);
    });
    return type === 'most_fields' ? bool({ should: perField, minimumShould: 1 }) : { kind: 'max', of: perField };
  },
  bool: (body, at, budget) => {
    const options = object(body, at, ['must', 'should', 'must_not', 'filter', 'minimum_should_match', 'boost']);
    const part = (name: string) => {
      const value = options[name];
      if (value === undefined) return [];
      return (Array.isArray(value) ? value : [value]).map((clause, index) => clauseOf(clause, `${at}.${name}[${index}]`, budget));
    };
    const must = part('must');
    const should = part('should');
    const filter = part('filter');
    const mustNot = part('must_not');
    const minimumShould =
      options.minimum_should_match === undefined
        ? must.length + filter.length > 0 || should.length === 0
          ? 0
          : 1
        : minimumShouldOf(options.minimum_should_match, should.length, `${at}.minimum_should_match`);
    return bool({ must, should, filter, mustNot, minimumShould, boost: boostOf(options.boost, at) });
  },
  term: (body, at) => {
    const [field, value] = oneField(body, at);
    const asked = value !== null && typeof value === 'object' ? object(value, `${at}.${field}`, ['value', 'boost']).value : value;
    return { kind: 'values', field: metadataField(field, at), anyOf: [scalar(asked, `${at}.${field}`)] };
  },
  terms: (body, at) => {
    const [field, value] = oneField(body, at);
    return {
      kind: 'values',
      field: metadataField(field, at),
      anyOf: list(value, `${at}.${field}`).map((item, index) => scalar(item, `${at}.${field}[${index}]`)),
    };
  },
  range: (body, at) => {
    const [field, value] = oneField(body, at);
    const bounds = object(value, `${at}.${field}`, ['gt', 'gte', 'lt', 'lte']);
    const range: FilterRange = {};
    for (const [name, bound] of Object.entries(bounds)) {
      if (typeof bound !== 'number' && typeof bound !== 'string') throw new DslError(`${at}.${field}.${name} must be a number or a string.`);
      range[name as keyof FilterRange] = bound;
    }
    if (Object.keys(range).length === 0) throw new DslError(`${at}.${field} needs at least one of gt, gte, lt, lte.`);
    return { kind: 'range', field: metadataField(field, at), range };
  },
  exists: (body, at) => {
    const options = object(body, at, ['field']);
    return { kind: 'exists', field: metadataField(text(options.field, `${at}.field`), at) };
  },
  ids: (body, at) => {
    const options = object(body, at, ['values']);
    return { kind: 'ids', ids: list(options.values, `${at}.values`).map((id, index) => text(id, `${at}.values[${index}]`)) };
  },
  match_all: (body, at) => {
    object(body, at, ['boost']);
    return { kind: 'every' };
  },
};

function clauseOf(query: Json, at: string, budget: Budget): QueryClause {
  if (--budget.left < 0) throw new DslError(`The query holds more than ${MAX_CLAUSES} clauses.`);
  if (query === null || typeof query !== 'object' || Array.isArray(query))
    throw new DslError(`${at} must be an object holding one clause, such as {"match": "text"}.`);
  const names = Object.keys(query);
  if (names.length !== 1) throw new DslError(`${at} must hold exactly one clause (of ${Object.keys(CLAUSES).join(', ')}); it holds ${names.length}.`);
  const name = names[0];
  const read = CLAUSES[name];
  if (!Object.hasOwn(CLAUSES, name)) throw new DslError(`${at} holds an unknown clause "${name}": use one of ${Object.keys(CLAUSES).join(', ')}.`);
  return read((query as Record<string, Json>)[name], `${at}.${name}`, budget);
}

function object(value: Json, at: string, options: string[]): Record<string, Json> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DslError(`${at} must be an object.`);
  for (const name of Object.keys(value))
    if (!options.includes(name)) throw new DslError(`${at} has an unknown option "${name}": it takes ${options.join(', ')}.`);
  return value as Record<string, Json>;
}

function oneField(value: Json, at: string): [string, Json] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DslError(`${at} must be an object naming one field.`);
  const entries = Object.entries(value);
  if (entries.length !== 1) throw new DslError(`${at} must name exactly one field; it names ${entries.length}.`);
  if (entries[0][0] === '') throw new DslError(`${at} names an empty field.`);
  return entries[0];
}

function text(value: Json, at: string): string {
  if (typeof value !== 'string' || !/\S/.test(value)) throw new DslError(`${at} must be a non-empty string.`);
  return value;
}

function list(value: Json, at: string): Json[] {
  if (!Array.isArray(value) || value.length === 0) throw new DslError(`${at} must be a non-empty list.`);
  if (value.length > 1000) throw new DslError(`${at} holds more than 1000 items.`);
  return value;
}

function scalar(value: Json, at: string): FilterScalar {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as FilterScalar;
  throw new DslError(`${at} must be a string, number, boolean or null.`);
}

function oneOf<T extends string>(value: Json, allowed: readonly T[], at: string): T {
  if (!allowed.includes(value as T)) throw new DslError(`${at} must be ${allowed.map((option) => `"${option}"`).join(' or ')}.`);
  return value as T;
}

/** Elasticsearch's fuzziness: 0, 1 or 2 edits ("0", "1", "2" too), or "AUTO" (this service's auto: see Typos). */
function fuzzinessOf(value: Json, at: string): Typos | undefined {
  if (value === undefined) return undefined;
  if (value === 0 || value === 1 || value === 2) return value;
  if (value === '0' || value === '1' || value === '2') return Number(value) as 0 | 1 | 2;
  if (typeof value === 'string' && value.toLowerCase() === 'auto') return 'auto';
  throw new DslError(`${at} must be 0, 1, 2 or "AUTO".`);
}

function boostOf(value: Json, at: string): number {
  if (value === undefined) return 1;
  if (typeof value !== 'number' || !(value >= 0) || !Number.isFinite(value)) throw new DslError(`${at}.boost must be a number of 0 or more.`);
  return value;
}

/** "title^3": the field and its weight. */
function boostedField(spec: string, at: string): [string, number] {
  const caret = spec.lastIndexOf('^');
  if (caret < 0) return [spec, 1];
  const weight = Number(spec.slice(caret + 1));
  if (caret === 0 || !(weight >= 0) || !Number.isFinite(weight))
    throw new DslError(`${at}: "${spec}" must be a field name, with ^ and a number of 0 or more after it if weighted.`);
  return [spec.slice(0, caret), weight];
}

function minimumShouldOf(value: Json, should: number, at: string): number {
  if (typeof value === 'number' && Number.isInteger(value)) return value < 0 ? Math.max(0, should + value) : value;
  if (typeof value === 'string') {
    const percent = /^(-?\d+)%$/.exec(value);
    if (percent) {
      const share = Math.floor((should * Math.abs(Number(percent[1]))) / 100);
      return Number(percent[1]) < 0 ? should - share : share;
    }
    if (/^-?\d+$/.test(value)) return minimumShouldOf(Number(value), should, at);
  }
  throw new DslError(`${at} must be an integer, or a percentage such as "50%".`);
}

function fieldOf(name: string): QueryField {
  if (name === 'title' || name === 'text') return { kind: name };
  return { kind: 'metadata', name };
}

function metadataField(name: string, at: string): string {
  if (name === 'title' || name === 'text' || name === 'doc_id')
    throw new DslError(`${at} works on metadata fields, not ${name}: use match or match_phrase for title and text, ids for doc_id.`);
  return name;
}

type FindingClause = Extract<QueryClause, { kind: 'words' | 'phrase' | 'prefix' }>;

/** The words and phrases a clause finds documents by (not those it leaves out): what highlights mark. */
export function findingClauses(clause: QueryClause): FindingClause[] {
  switch (clause.kind) {
    case 'words':
    case 'phrase':
    case 'prefix':
      return [clause];
    case 'max':
      return clause.of.flatMap(findingClauses);
    case 'bool':
      return [...clause.must, ...clause.should].flatMap(findingClauses);
    default:
      return [];
  }
}
