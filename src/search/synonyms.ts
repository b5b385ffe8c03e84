import type { QueryClause } from './document-index.js';
import { ENGLISH } from './engine/languages.js';
import { phraseWords } from './phrase.js';
import { queryWords } from './query-text.js';

/** An operator's synonym rule: a set whose members all match each other, or a one-way rule. */
export type SynonymRule = { words: string[] } | { from: string; to: string[] };

export const MAX_SYNONYM_RULES = 10_000;
export const MAX_MEMBER_WORDS = 10;

/** Where a search finds the synonym rules in force (SynonymService). */
export interface SynonymSource {
  current(): SynonymTable;
}

/** What is wrong with the rules, naming the first rule at fault; undefined when they hold. */
export function synonymRulesError(rules: readonly SynonymRule[]): string | undefined {
  if (rules.length > MAX_SYNONYM_RULES) return `synonyms holds ${rules.length} rules; at most ${MAX_SYNONYM_RULES} are kept.`;
  for (const [index, rule] of rules.entries()) {
    const members = 'words' in rule ? rule.words : [rule.from, ...rule.to];
    if ('words' in rule && rule.words.length < 2) return `synonyms[${index}].words needs at least 2 members.`;
    for (const member of members) {
      const words = queryWords(member);
      if (words.length === 0) return `synonyms[${index}]: "${member}" holds no word to match (only stopwords or punctuation).`;
      if (words.length > MAX_MEMBER_WORDS)
        return `synonyms[${index}]: "${member}" has ${words.length} words; a member has at most ${MAX_MEMBER_WORDS}.`;
    }
  }
  return undefined;
}

/**
 * Rules as a file gives them (`{"synonyms": [...]}`, as PUT /admin/synonyms takes): read and
 * checked, or what is wrong, naming the rule.
 */
export function readSynonymRules(value: unknown): { rules: SynonymRule[] } | { error: string } {
  const list = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as { synonyms?: unknown }).synonyms : undefined;
  if (!Array.isArray(list)) return { error: 'The rules must be an object {"synonyms": [...]}.' };
  const isMember = (member: unknown) => typeof member === 'string' && member.trim() !== '';
  for (const [index, rule] of list.entries()) {
    const keys = rule !== null && typeof rule === 'object' ? Object.keys(rule).sort().join(',') : '';
    const words = keys === 'words' && Array.isArray(rule.words) && rule.words.length >= 2 && rule.words.every(isMember);
    const oneWay = keys === 'from,to' && isMember(rule.from) && Array.isArray(rule.to) && rule.to.length >= 1 && rule.to.every(isMember);
    if (!words && !oneWay)
      return {
        error: `synonyms[${index}] must be {"words": [at least 2 members]} or {"from": "member", "to": [members]}, each member a non-empty string.`,
      };
  }
  const error = synonymRulesError(list as SynonymRule[]);
  return error ? { error } : { rules: list as SynonymRule[] };
}

/**
 * A member as a query's words are matched against it: its words' stems, stopwords left out, joined
 * by spaces. Rules are read as English, whatever the query's language.
 */
function keyOf(words: readonly string[]): string {
  return words
    .filter((word) => !ENGLISH.stopwords.has(word))
    .map((word) => ENGLISH.stem(word))
    .join(' ');
}

/**
 * The rules compiled for query time: per member, the members it also matches (a set's other
 * members; a one-way rule's `to` for its `from`), each as the text of a word or a phrase.
 */
export class SynonymTable {
  private readonly alternatives = new Map<string, string[]>();
  private longest = 0;

  constructor(rules: readonly SynonymRule[] = []) {
    for (const rule of rules) {
      if ('words' in rule) for (const member of rule.words) this.add(member, rule.words);
      else this.add(rule.from, rule.to);
    }
  }

  get empty(): boolean {
    return this.alternatives.size === 0;
  }

  private add(member: string, others: readonly string[]): void {
    const words = queryWords(member);
    const key = keyOf(words);
    const alternatives = this.alternatives.get(key) ?? [];
    for (const other of others) if (keyOf(queryWords(other)) !== key && !alternatives.includes(other)) alternatives.push(other);
    this.alternatives.set(key, alternatives);
    this.longest = Math.max(this.longest, words.length);
  }

  /**
   * A query's words (analysed, stopwords out, in order) split into runs: each a member matched
   * (the longest first) with its alternatives, or a word that matches none (no alternatives).
   */
  runs(words: readonly string[]): Array<{ words: string[]; alternatives: string[] }> {
    const runs: Array<{ words: string[]; alternatives: string[] }> = [];
    for (let start = 0; start < words.length; ) {
      let matched = 0;
      for (let length = Math.min(this.longest, words.length - start); length > 0 && matched === 0; length--)
        if (this.alternatives.has(keyOf(words.slice(start, start + length)))) matched = length;
      const run = words.slice(start, start + Math.max(matched, 1));
      runs.push({ words: run, alternatives: matched > 0 ? (this.alternatives.get(keyOf(run)) as string[]) : [] });
      start += run.length;
    }
    return runs;
  }

  /** Each single word's single-word alternatives, when no alternative is a phrase; undefined when one is. */
  wordAlternatives(words: readonly string[]): Record<string, string[]> | undefined {
    const found: Record<string, string[]> = {};
    for (const run of this.runs(words)) {
      if (run.alternatives.length === 0) continue;
      const single = run.alternatives.map((alternative) => queryWords(alternative));
      if (run.words.length > 1 || single.some((alternative) => alternative.length !== 1)) return undefined;
      found[run.words[0]] = single.map((alternative) => alternative[0]);
    }
    return found;
  }

  /**
   * The clause with its words clauses' members matching their alternatives too: each member
   * matched becomes the best (dis_max) of itself and its alternatives, words as words and phrases
   * as phrases, so that a document is scored as the synonym it holds.
   */
  expand(clause: QueryClause): QueryClause {
    if (this.empty) return clause;
    switch (clause.kind) {
      case 'words':
        return this.expandWords(clause);
      case 'max':
        return { ...clause, of: clause.of.map((part) => this.expand(part)) };
      case 'bool':
        return {
          ...clause,
          must: clause.must.map((part) => this.expand(part)),
          should: clause.should.map((part) => this.expand(part)),
          filter: clause.filter.map((part) => this.expand(part)),
          mustNot: clause.mustNot.map((part) => this.expand(part)),
        };
      default:
        return clause;
    }
  }

  private expandWords(clause: Extract<QueryClause, { kind: 'words' }>): QueryClause {
    const runs = this.runs(clause.terms);
    if (runs.every((run) => run.alternatives.length === 0)) return clause;
    const plain = runs.filter((run) => run.alternatives.length === 0).flatMap((run) => run.words);
    const parts: QueryClause[] = plain.length > 0 ? [{ ...clause, terms: plain, boost: 1 }] : [];
    for (const run of runs.filter((each) => each.alternatives.length > 0)) {
      const alternatives = run.alternatives.map((alternative): QueryClause => {
        const words = queryWords(alternative);
        return words.length === 1
          ? { kind: 'words', field: clause.field, terms: words, operator: 'or', boost: 1, typos: 0 }
          : { kind: 'phrase', field: clause.field, words: phraseWords(alternative), boost: 1 };
      });
      parts.push({ kind: 'max', of: [{ ...clause, terms: run.words, boost: 1 }, ...alternatives] });
    }
    return clause.operator === 'and' ? bool({ must: parts, boost: clause.boost }) : bool({ should: parts, minimumShould: 1, boost: clause.boost });
  }
}

function bool(parts: Partial<Extract<QueryClause, { kind: 'bool' }>>): QueryClause {
  return { kind: 'bool', must: [], should: [], mustNot: [], filter: [], minimumShould: 0, boost: 1, ...parts };
}
