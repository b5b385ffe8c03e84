import type { Command } from 'commander';
import { SEARCH_LANGUAGES } from '../../rules.js';
import { type Language, languageNamed } from '../../search/analyzer.js';
import { DEFAULT_HIGHLIGHT, type HighlightSettings } from '../../search/highlight.js';
import { type SearchOutcome, SearchService } from '../../search/search-service.js';
import { SynonymTable } from '../../search/synonyms.js';
import type { Store } from '../../store/store.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { table } from '../table.js';

interface SearchOptions {
  json?: boolean;
  topK: string;
  language?: string;
}

export function searchCommand(program: Command, cli: CliContext): void {
  program
    .command('search')
    .description('Search the corpus as POST /query does (lexical, highlighted): free, charged to no key.')
    .argument('<text>', 'the query text')
    .option('--top-k <n>', 'how many documents (1 to 100)', '10')
    .option('--language <code>', 'the language the text is analysed in (ISO 639-1, or none); default SEARCH_LANGUAGE')
    .option('--json', "print the result as JSON (/query's resp.body)")
    .action(async (text: string, options: SearchOptions) => {
      const topK = Number(options.topK);
      if (!Number.isInteger(topK) || topK < 1 || topK > 100) throw new CliError('--top-k must be a whole number from 1 to 100.');
      if (text.trim() === '') throw new CliError('Give the text to search for, for example: metered-search search "data breach".');
      const corpusLanguage = languageNamed(cli.config().searchLanguage) as Language;
      const language = options.language === undefined ? corpusLanguage : languageNamed(options.language);
      if (!language) throw new CliError(`--language must be one of ${SEARCH_LANGUAGES.join(', ')}.`);
      // In a terminal the matches are in brackets; as JSON, as /query's "highlight": true gives them.
      const highlight = options.json ? DEFAULT_HIGHLIGHT : { preTag: '[', postTag: ']', snippetChars: 120, escape: false };
      const outcome = await cli.withStore((store) => search(store, { text, topK, highlight, language, corpusLanguage }));
      const answer = { hits: { total: outcome.total, documents: outcome.documents }, ...(outcome.corrected ? { corrected: outcome.corrected } : {}) };
      cli.output(options.json, answer, () => renderSearch(outcome));
    });
}

interface CliSearch {
  text: string;
  topK: number;
  highlight: HighlightSettings;
  language: Language;
  corpusLanguage: Language;
}

async function search(store: Store, asked: CliSearch): Promise<SearchOutcome> {
  const synonyms = new SynonymTable((await store.synonyms.read()).rules);
  const service = new SearchService(store.index, store.documents, undefined, { current: () => synonyms }, asked.corpusLanguage);
  await service.prepare();
  const { text, topK, highlight, language } = asked;
  return service.search({ mode: 'lexical', text, field: { kind: 'all' }, filters: {}, topK, offset: 0, highlight, language });
}

function renderSearch(outcome: SearchOutcome): string {
  if (outcome.total === 0) return 'No document matches.';
  const rows = outcome.documents.map((document) => [document.doc_id, document.confidence.toFixed(3), document.highlights?.title ?? document.title]);
  const snippets = outcome.documents.map((document) => `${document.doc_id}: ${document.highlights?.text ?? ''}`);
  return `${outcome.total} matching, the best ${outcome.documents.length}:\n${table([['DOC_ID', 'CONFIDENCE', 'TITLE'], ...rows])}\n\n${snippets.join('\n')}`;
}
