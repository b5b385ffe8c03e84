/**
 * The WordPiece tokenizer of a Hugging Face tokenizer.json, as BERT, MiniLM, BGE and E5 use it:
 * BertNormalizer (control characters out, CJK characters set apart, lowercasing, accents
 * stripped), BertPreTokenizer (whitespace and punctuation split), greedy longest-match WordPiece
 * with its "##" continuation, and the post-processor's [CLS] ... [SEP]. Other tokenizers are
 * refused by name (see readWordPiece), not approximated.
 */
export interface WordPieceSettings {
  vocab: ReadonlyMap<string, number>;
  unknownId: number;
  continuingPrefix: string;
  maxCharsPerWord: number;
  lowercase: boolean;
  stripAccents: boolean;
  cleanText: boolean;
  chineseChars: boolean;
  /** Token ids before and after the words (the post-processor's), with their type ids. */
  before: number[];
  after: number[];
  /** Tokens in all, the specials included. */
  maxLength: number;
}

export interface Encoding {
  ids: number[];
  typeIds: number[];
}

const CONTROL = /[\p{Cc}\p{Cf}]/u;
const WHITESPACE = /\s/u;
const PUNCTUATION = /[\p{P}!-/:-@[-`{-~]/u;
const MARKS = /\p{Mn}/gu;

export class WordPieceTokenizer {
  private readonly words = new Map<string, number[]>();

  constructor(private readonly settings: WordPieceSettings) {}

  encode(text: string): Encoding {
    const { before, after, maxLength } = this.settings;
    const room = Math.max(0, maxLength - before.length - after.length);
    const ids = [...before];
    for (const word of this.preTokenize(this.normalize(text))) {
      for (const id of this.pieces(word)) {
        if (ids.length - before.length >= room) break;
        ids.push(id);
      }
      if (ids.length - before.length >= room) break;
    }
    ids.push(...after);
    return { ids, typeIds: ids.map(() => 0) };
  }

  private normalize(text: string): string {
    const { cleanText, chineseChars, lowercase, stripAccents } = this.settings;
    let out = '';
    for (const char of text) {
      const code = char.codePointAt(0) as number;
      if (cleanText && (code === 0 || code === 0xfffd || (CONTROL.test(char) && char !== '\t' && char !== '\n' && char !== '\r'))) continue;
      if (cleanText && WHITESPACE.test(char)) out += ' ';
      else if (chineseChars && isCjk(code)) out += ` ${char} `;
      else out += char;
    }
    if (lowercase) out = out.toLowerCase();
    if (stripAccents) out = out.normalize('NFD').replace(MARKS, '');
    return out;
  }

  /** Whitespace-separated words, each punctuation character a word of its own. */
  private *preTokenize(text: string): Generator<string> {
    let word = '';
    for (const char of text) {
      if (WHITESPACE.test(char)) {
        if (word) yield word;
        word = '';
      } else if (PUNCTUATION.test(char)) {
        if (word) yield word;
        yield char;
        word = '';
      } else word += char;
    }
    if (word) yield word;
  }

  /** The longest vocabulary entry from the start, then from where it ended (with the prefix): a word with a gap is one unknown token. */
  private pieces(word: string): number[] {
    const known = this.words.get(word);
    if (known) return known;
    const { vocab, unknownId, continuingPrefix, maxCharsPerWord } = this.settings;
    const chars = [...word];
    let pieces: number[] = [];
    if (chars.length > maxCharsPerWord) pieces = [unknownId];
    for (let start = 0; start < chars.length && pieces[0] !== unknownId; ) {
      let end = chars.length;
      let found: number | undefined;
      for (; end > start; end--) {
        const piece = (start > 0 ? continuingPrefix : '') + chars.slice(start, end).join('');
        found = vocab.get(piece);
        if (found !== undefined) break;
      }
      if (found === undefined) pieces = [unknownId];
      else {
        pieces.push(found);
        start = end;
      }
    }
    if (this.words.size < 100_000) this.words.set(word, pieces);
    return pieces;
  }
}

/** The CJK ideograph blocks BERT sets apart (its _is_chinese_char). */
function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x20000 && code <= 0x2a6df) ||
    (code >= 0x2a700 && code <= 0x2b73f) ||
    (code >= 0x2b740 && code <= 0x2b81f) ||
    (code >= 0x2b820 && code <= 0x2ceaf) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0x2f800 && code <= 0x2fa1f)
  );
}

/** Why a tokenizer.json cannot be read as WordPiece: the message names what it found. */
export class TokenizerFormatError extends Error {}

/**
 * The settings of a parsed tokenizer.json; `maxLength` where the folder sets no other. Throws a
 * TokenizerFormatError for a model, normalizer or pre-tokenizer other than BERT's.
 */
export function readWordPiece(json: unknown, maxLength: number): WordPieceSettings {
  const file = json as Record<string, Record<string, unknown> | null | undefined>;
  const model = file?.model;
  if (!model || typeof model !== 'object') throw new TokenizerFormatError('it has no "model"');
  if (model.type !== 'WordPiece')
    throw new TokenizerFormatError(`its model is ${JSON.stringify(model.type)}; only WordPiece (BERT, MiniLM, BGE, E5) is supported`);
  const vocabObject = model.vocab;
  if (!vocabObject || typeof vocabObject !== 'object') throw new TokenizerFormatError('its WordPiece model has no "vocab"');
  const vocab = new Map(Object.entries(vocabObject as Record<string, number>));
  const unknownToken = typeof model.unk_token === 'string' ? model.unk_token : '[UNK]';
  const unknownId = vocab.get(unknownToken);
  if (unknownId === undefined) throw new TokenizerFormatError(`its vocab has no unknown token ${JSON.stringify(unknownToken)}`);
  const normalizer = file.normalizer;
  if (normalizer && normalizer.type !== 'BertNormalizer')
    throw new TokenizerFormatError(`its normalizer is ${JSON.stringify(normalizer.type)}; only BertNormalizer is supported`);
  const preTokenizer = file.pre_tokenizer;
  if (preTokenizer && preTokenizer.type !== 'BertPreTokenizer')
    throw new TokenizerFormatError(`its pre_tokenizer is ${JSON.stringify(preTokenizer.type)}; only BertPreTokenizer is supported`);
  const lowercase = normalizer ? normalizer.lowercase !== false : false;
  const truncation = file.truncation;
  return {
    vocab,
    unknownId,
    continuingPrefix: typeof model.continuing_subword_prefix === 'string' ? model.continuing_subword_prefix : '##',
    maxCharsPerWord: typeof model.max_input_chars_per_word === 'number' ? model.max_input_chars_per_word : 100,
    lowercase,
    // BertNormalizer's strip_accents: null follows lowercase, as BERT's uncased models have it.
    stripAccents: normalizer ? (typeof normalizer.strip_accents === 'boolean' ? normalizer.strip_accents : lowercase) : false,
    cleanText: normalizer ? normalizer.clean_text !== false : false,
    chineseChars: normalizer ? normalizer.handle_chinese_chars !== false : false,
    ...specialTokens(file.post_processor, vocab),
    maxLength: truncation && typeof truncation.max_length === 'number' ? Math.min(truncation.max_length, maxLength) : maxLength,
  };
}

/** The ids the post-processor puts around a single sequence: TemplateProcessing's or BertProcessing's; none without one. */
function specialTokens(
  processor: Record<string, unknown> | null | undefined,
  vocab: ReadonlyMap<string, number>,
): { before: number[]; after: number[] } {
  const idOf = (token: string) => {
    const id = vocab.get(token);
    if (id === undefined) throw new TokenizerFormatError(`its post_processor names ${JSON.stringify(token)}, which its vocab does not hold`);
    return id;
  };
  if (!processor) return { before: [], after: [] };
  if (processor.type === 'BertProcessing') {
    const [cls] = processor.cls as [string, number];
    const [sep] = processor.sep as [string, number];
    return { before: [idOf(cls)], after: [idOf(sep)] };
  }
  if (processor.type !== 'TemplateProcessing')
    throw new TokenizerFormatError(`its post_processor is ${JSON.stringify(processor.type)}; TemplateProcessing and BertProcessing are supported`);
  const single = (processor.single ?? []) as Array<{ SpecialToken?: { id: string }; Sequence?: unknown }>;
  const sequenceAt = single.findIndex((piece) => piece.Sequence !== undefined);
  const specials = (pieces: typeof single) => pieces.flatMap((piece) => (piece.SpecialToken ? [idOf(piece.SpecialToken.id)] : []));
  return { before: specials(single.slice(0, sequenceAt)), after: specials(single.slice(sequenceAt + 1)) };
}
