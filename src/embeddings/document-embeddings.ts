import type { DocumentRecord, IngestEmbedding, StoredKeys } from '../documents/document-store.js';
import { type Embedder, EmbedderError, embeddingKey, textToEmbed } from './embedder.js';

/** Documents looked up and embedded together on their way into a store. */
const DOCUMENTS_PER_STEP = 256;
/**
 * Steps being embedded while the one before them is written: the model's time overlaps the
 * store's, and an endpoint or local workers get more than one batch at once. A text repeated in
 * two steps in flight is embedded twice, and its vector stored once (the stores ignore a key held).
 */
const STEPS_AHEAD = 2;

/**
 * Gives each ingested document its vector: the key of its text (see embeddingKey), and the vector
 * from the embedder unless the store already holds one by that key. An embedder failure rejects
 * the whole source, so the store's all-or-nothing ingest writes nothing.
 */
export class DocumentEmbeddings implements IngestEmbedding {
  constructor(
    readonly embedder: Embedder,
    private readonly maxChars: number,
  ) {}

  keyOf(document: Pick<DocumentRecord, 'title' | 'text'>): string {
    return embeddingKey(this.embedder, textToEmbed(document, this.maxChars));
  }

  async *withVectors(source: AsyncIterable<DocumentRecord>, stored: StoredKeys): AsyncGenerator<DocumentRecord> {
    const ahead: Array<Promise<DocumentRecord[]>> = [];
    const embedAhead = (batch: DocumentRecord[]) => {
      const embedded = this.embedBatch(batch, stored);
      // Its failure is thrown when it is awaited, in turn; until then it is not unhandled.
      embedded.catch(() => undefined);
      ahead.push(embedded);
    };
    let batch: DocumentRecord[] = [];
    for await (const document of source) {
      batch.push(document);
      if (batch.length === DOCUMENTS_PER_STEP) {
        embedAhead(batch);
        batch = [];
        if (ahead.length > STEPS_AHEAD) yield* await (ahead.shift() as Promise<DocumentRecord[]>);
      }
    }
    if (batch.length > 0) embedAhead(batch);
    while (ahead.length > 0) yield* await (ahead.shift() as Promise<DocumentRecord[]>);
  }

  private async embedBatch(documents: DocumentRecord[], stored: StoredKeys): Promise<DocumentRecord[]> {
    const texts = documents.map((document) => textToEmbed(document, this.maxChars));
    const keys = texts.map((text) => embeddingKey(this.embedder, text));
    const held = await stored([...new Set(keys)]);
    const toEmbed = new Map<string, string>();
    keys.forEach((key, position) => {
      if (!held.has(key)) toEmbed.set(key, texts[position]);
    });
    const vectors = toEmbed.size > 0 ? await this.embedNaming(documents, keys, [...toEmbed.entries()]) : [];
    const byKey = new Map([...toEmbed.keys()].map((key, position) => [key, vectors[position]]));
    return documents.map((document, position) => {
      const key = keys[position];
      const vector = byKey.get(key);
      // One vector per key is stored: the first document of the batch carries it.
      byKey.delete(key);
      return { ...document, embedding: vector ? { key, vector } : { key } };
    });
  }

  /** The texts' vectors; a vector the model got wrong rejects naming the first document that has its text. */
  private async embedNaming(documents: DocumentRecord[], keys: string[], toEmbed: Array<[string, string]>): Promise<Float32Array[]> {
    try {
      return await this.embedder.embed(toEmbed.map(([, text]) => text));
    } catch (error) {
      if (!(error instanceof EmbedderError) || error.textIndex === undefined) throw error;
      const document = documents[keys.indexOf(toEmbed[error.textIndex][0])];
      throw new EmbedderError(`${error.message}, embedding document "${document.docId}"`);
    }
  }
}
