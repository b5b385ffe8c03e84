import { errorCatalogue } from '../../errors.js';
import { SEARCH_LANGUAGES } from '../../rules.js';
import { SEMANTIC_DEPTH } from '../../search/document-index.js';
import type { SearchOutcome } from '../../search/search-service.js';

const text = { type: 'string', pattern: '\\S' } as const;
const MAX_OFFSET = 10_000;
const MAX_FACETS = 10;
const MAX_FIELDS = 50;
const scalar = { type: ['string', 'number', 'boolean', 'null'] } as const;
const bound = { type: ['number', 'string'] } as const;

const queryObject = {
  type: 'object',
  minProperties: 1,
  description:
    'A subset of Elasticsearch\'s query DSL, nested as it nests: match ("text", {"<field>": "text"} or {"<field>": {"query": "text", "operator": "and", "fuzziness": 1}}), match_phrase, multi_match (query, fields such as "title^3", type best_fields, most_fields or phrase, fuzziness), prefix ({"<field>": "prot"}: every word beginning so, ranked as the query of those words), fuzzy ({"<field>": {"value": "word", "fuzziness": 0, 1, 2 or "AUTO"}}), bool (must, should, must_not, filter, minimum_should_match), and on metadata fields term, terms, range (gt, gte, lt, lte), exists; ids (values: doc_ids) and match_all. Fields are title, text or a metadata field. must and should add up their scores; filter and must_not do not score. An unknown clause or option is a 400 naming it. Objects other than match are lexical only.',
} as const;

/** The body of a search: POST /query's, and POST /admin/search's. */
export const searchBodySchema = {
  type: 'object',
  required: ['query'],
  properties: {
    query: {
      anyOf: [
        {
          ...text,
          description:
            'Text searched in title and text: its words (operator says whether any or all must match), "phrases in quotes" (words in that order; a stopword keeps its place), and -word or -"a phrase" to leave out the documents holding them (text of exclusions alone matches every other document). Any other text is plain, and no text is an error.',
        },
        queryObject,
      ],
    },
    sort: {
      type: 'array',
      maxItems: 3,
      items: { type: 'string', minLength: 1, pattern: '^[^"]+$' },
      description:
        'Up to 3 keys, each "<key>", "<key>:asc" or "<key>:desc": a metadata field, title, doc_id or _score (default order: _score descending). Ascending, numbers sort before strings (by code point), descending the reverse; documents lacking the field come last either way; an array sorts by its smallest element ascending, its largest descending; ties go to the next key, then the score, then doc_id. Over every match. Lexical only.',
    },
    top_k: { type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'How many documents to return.' },
    offset: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_OFFSET,
      description: 'The rank the page starts at; absent: 0, the best match. Past the last match the page is empty; total is unchanged.',
    },
    facets: {
      type: 'array',
      maxItems: MAX_FACETS,
      items: { type: 'string', minLength: 1 },
      description: 'Metadata fields whose values to count over every match (after filters), at most 10.',
    },
    facet_limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      description: 'How many values to return per facet, the most common first; absent: 10.',
    },
    mode: {
      type: 'string',
      enum: ['lexical', 'semantic', 'hybrid'],
      description: `lexical (default): BM25 over the words. semantic: the documents whose embeddings are nearest the prompt's, by cosine, among the ${SEMANTIC_DEPTH} nearest. hybrid: both rankings fused by reciprocal rank. semantic and hybrid need an embedding model (EMBEDDINGS_URL): without one they are a 400; when the model fails, or while the vector index is still being built after a start, semantic is a 503 and hybrid answers lexically with x-search-fallback: lexical. Nothing is charged for a refusal.`,
    },
    operator: {
      type: 'string',
      enum: ['or', 'and'],
      description:
        "or (the default): a document holding any of the words matches; and: only a document holding every word (in title or text, or in the match clause's field). The ranking among the matches is the same BM25.",
    },
    fields: {
      type: 'array',
      maxItems: MAX_FIELDS,
      items: { type: 'string', minLength: 1 },
      description: 'Metadata fields each document carries in its "fields" (those it has); ["*"]: all of them. Free.',
    },
    highlight: {
      description:
        'Each document gains "highlights": the title whole and the text as its best snippet (the window of about snippet_chars holding the most distinct matched words, cut at word boundaries and marked …), the words that matched after analysis wrapped in the tags, HTML-escaped around them. Named string metadata fields come whole. In semantic mode the snippet is the beginning of the text. Free, unless PRICES or the key\'s prices name /query:highlight: a lexical query asking for highlights then costs that.',
      // The object first: an unknown option is then the error named.
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            fields: {
              type: 'array',
              maxItems: MAX_FIELDS,
              items: { type: 'string', minLength: 1 },
              description: 'title, text or string metadata fields; absent: title and text.',
            },
            pre_tag: { type: 'string', maxLength: 100, description: 'Before each matched word; absent: <mark>.' },
            post_tag: { type: 'string', maxLength: 100, description: 'After each matched word; absent: </mark>.' },
            snippet_chars: { type: 'integer', minimum: 20, maximum: 2000, description: 'About how long the text snippet is; absent: 160.' },
            escape: { type: 'boolean', description: 'false: the text comes raw, not HTML-escaped; absent: true.' },
          },
        },
        { type: 'boolean' },
      ],
    },
    typos: {
      enum: ['auto', 0, 1, 2],
      description:
        'How words forgive misspelling (Damerau-Levenshtein: a swap of neighbours is one edit). auto (the default): a word of 5 to 8 characters that no document holds matches the words one edit from it, of 9 or more two, so a correctly spelt query ranks as without it. 1 or 2: every word of at least 4 characters also matches the words that many edits from it, its own matches ranking above them. 0: exact words only. Words in phrases, prefixes and words with digits are matched exactly. The answer\'s "corrected" says which words matched what (stems, as the index holds them).',
    },
    language: {
      enum: SEARCH_LANGUAGES,
      description:
        'The language the query is analysed in (ISO 639-1, or none: no stemming, no stopwords), so that its words find the inflections of documents in that language ("Vertrag" finds "Verträgen" in German). Absent: SEARCH_LANGUAGE (en unless the operator set another). zh and ja split the text into words as the documents of those languages are.',
    },
    prefix: {
      type: 'boolean',
      description:
        'true: the last word of the text is a prefix too, as if it ended in * (search as you type). Absent: false. In the text, word* (at least 2 characters before the *) matches every word that begins with it after stemming (and, when stemming changes the prefix, with its stem: a word typed whole finds itself), ranked as the query of all those words.',
    },
    filters: {
      type: 'object',
      description:
        'Metadata filters, all of which must hold: a field equals the scalar, or any of the list; lies within a range ({"gte": 2016, "lt": 2020}: numbers compare as numbers, strings by code point, so ISO-8601 dates work, and a value of another type does not match); or equals none of {"not": <scalar or list>} (a document lacking the field passes). An array field matches when any element does.',
      additionalProperties: {
        anyOf: [
          scalar,
          { type: 'array', items: scalar },
          { type: 'object', minProperties: 1, additionalProperties: false, properties: { gt: bound, gte: bound, lt: bound, lte: bound } },
          {
            type: 'object',
            required: ['not'],
            additionalProperties: false,
            properties: { not: { anyOf: [scalar, { type: 'array', items: scalar }] } },
          },
        ],
      },
    },
  },
  additionalProperties: true,
} as const;

/** What a search body's invalid fields are refused with. */
export const searchFieldMessages = {
  '': 'The body must be a JSON object with a query field, sent with Content-Type: application/json.',
  query: errorCatalogue.MISSING_QUERY.message,
  top_k: 'top_k must be a JSON integer from 1 to 100 (not a string, not a fraction).',
  filters:
    'filters must be an object whose values are scalars (string, number, boolean, null), lists of scalars, ranges ({"gte": 2016, "lt": 2020}; bounds gt, gte, lt, lte of numbers or strings) or {"not": a scalar or a list}.',
  offset: `offset must be a JSON integer from 0 to ${MAX_OFFSET}.`,
  facets: `facets must be a list of at most ${MAX_FACETS} metadata field names (non-empty strings).`,
  facet_limit: 'facet_limit must be a JSON integer from 1 to 100.',
  mode: 'mode must be "lexical", "semantic" or "hybrid".',
  operator: 'operator must be "or" or "and".',
  sort: 'sort must be a list of at most 3 keys such as "year:desc", "title", "doc_id" or "_score" (field names without double quotes).',
  fields: `fields must be a list of at most ${MAX_FIELDS} metadata field names (non-empty strings), or ["*"].`,
  typos: 'typos must be "auto", 0, 1 or 2.',
  prefix: 'prefix must be true or false.',
  language: `language must be one of ${SEARCH_LANGUAGES.join(', ')} (ISO 639-1 codes in lower case, or none).`,
  highlight:
    'highlight must be true, false, or an object of fields (a list of names), pre_tag and post_tag (strings of at most 100 characters), snippet_chars (an integer from 20 to 2000) and escape (true or false).',
};

/** A search's outcome as its answer's body: the hits, the corrections when words matched through typos, the facets when asked. */
export function searchAnswerOf(result: SearchOutcome) {
  return {
    hits: { total: result.total, documents: result.documents },
    ...(result.corrected ? { corrected: result.corrected } : {}),
    ...(result.facets ? { facets: result.facets } : {}),
  };
}

/** What a search answers: the hits, and the facets when they were asked. */
export const searchAnswerSchema = {
  type: 'object',
  required: ['hits'],
  properties: {
    hits: {
      type: 'object',
      required: ['total', 'documents'],
      properties: {
        total: {
          type: 'integer',
          description: `Every match after filters, not only those returned (whatever the offset). lexical: the documents holding a query word. semantic: the documents among the ${SEMANTIC_DEPTH} nearest the prompt that pass the filters and are similar at all (cosine > 0). hybrid: the union of both.`,
        },
        documents: {
          type: 'array',
          items: {
            type: 'object',
            required: ['doc_id', 'title', 'confidence'],
            properties: {
              doc_id: { type: 'string' },
              title: { type: 'string' },
              confidence: {
                type: 'number',
                minimum: 0,
                maximum: 1,
                description:
                  'Non-increasing down the list. lexical: s / (s + 10) of the BM25 score s. semantic: the cosine similarity. hybrid: the fused score over the best possible (first in both rankings).',
              },
              fields: {
                type: 'object',
                additionalProperties: true,
                description: 'When "fields" was asked: the named metadata fields the document has.',
              },
              highlights: {
                type: 'object',
                additionalProperties: { type: 'string' },
                description: 'When "highlight" was asked: per field (title, text, metadata), its text with the matched words tagged.',
              },
            },
          },
        },
      },
    },
    corrected: {
      type: 'object',
      description:
        'When a word matched through a typo (see typos): per query word, the words it matched instead, as the index holds them (stems: "protect" for protection).',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    },
    facets: {
      type: 'object',
      description:
        'When facets were asked: per field, its values and how many matches hold each, the most common first (ties by value); {} for a field no match has.',
      additionalProperties: { type: 'object', additionalProperties: { type: 'integer' } },
    },
  },
} as const;
