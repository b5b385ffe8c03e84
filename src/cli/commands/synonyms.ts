import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { readSynonymRules, type SynonymRule } from '../../search/synonyms.js';
import type { StoredSynonyms } from '../../synonyms/synonym-store.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';

/** `synonyms set FILE.json` and `synonyms list`: the rules every instance applies (as PUT and GET /admin/synonyms). */
export function synonymsCommand(program: Command, cli: CliContext): void {
  const synonyms = program
    .command('synonyms')
    .description('The synonym rules searches apply: sets of words that match each other, and one-way rules.');
  synonyms
    .command('list')
    .description('Print the rules in force.')
    .option('--json', 'print them as JSON, as GET /admin/synonyms answers')
    .action(async (options: { json?: boolean }) => {
      const stored = await cli.withStore((store) => store.synonyms.read());
      cli.output(options.json, shown(stored), () => renderRules(stored));
    });
  synonyms
    .command('set')
    .description('Replace every rule with those of a JSON file {"synonyms": [{"words": [...]}, {"from": "...", "to": [...]}]} (audited as cli).')
    .argument('<file>', 'the JSON file')
    .option('--json', 'print the rules set as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const read = readSynonymRules(parsedFile(file));
      if ('error' in read) throw new CliError(`${file}: ${read.error} Nothing was changed.`);
      const audit = { actor: 'cli', action: 'synonyms.set', target: null, requestId: null, detail: { rules: read.rules.length } };
      const stored = await cli.withStore((store) => store.synonyms.replace(read.rules, audit));
      cli.output(
        options.json,
        shown(stored),
        () => `${stored.rules.length} rules set (version ${stored.version}); running instances apply them within a second.`,
      );
    });
}

function parsedFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliError(`${file} cannot be read: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file} is not JSON: ${(error as Error).message}`);
  }
}

const shown = (stored: StoredSynonyms) => ({ synonyms: stored.rules, version: stored.version, updated_at: stored.updatedAt });

function renderRules(stored: StoredSynonyms): string {
  if (stored.rules.length === 0) return 'No synonym rules.';
  const line = (rule: SynonymRule) => ('words' in rule ? rule.words.join(' = ') : `${rule.from} -> ${rule.to.join(', ')}`);
  return `${stored.rules.length} rules (version ${stored.version}, set ${stored.updatedAt}):\n${stored.rules.map(line).join('\n')}`;
}
