import type { DocumentRecord, IngestEmbedding, StoredKeys } from '../documents/document-store.js';
import { type Embedder, EmbedderError, embeddingKey, textToEmbed } from './embedder.js';

/** Documents looked up and embedded together on their way into a store. */
const DOCUMENTS_PER_STEP = 256;

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
    let batch: DocumentRecord[] = [];
    for await (const document of source) {
      batch.push(document);
      if (batch.length === DOCUMENTS_PER_STEP) {
        yield* await this.embedBatch(batch, stored);
        batch = [];
      }
    }
    if (batch.length > 0) yield* await this.embedBatch(batch, stored);
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
