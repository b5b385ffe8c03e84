import type { Worker } from 'node:worker_threads';
import type { Language } from '../languages.js';
import type { AnalysableDocument } from '../search-index.js';
import type { AnalysedDocument, TermDictionary } from '../term-vector.js';
import { type StartWorker, threadModule } from './start-worker.js';

export interface AnalysisRequest {
  documents: AnalysableDocument[];
}

export interface AnalysisReply {
  vectors: AnalysedDocument[];
  /** Terms the batch added to the dictionary, with the ids the worker gave them. */
  added: Array<[number, string]>;
}

const WORKER_URL = threadModule('analysis-worker');

/**
 * Document analysis on a worker thread, so that a large ingest tokenises on one core while the
 * main thread parses input and writes SQLite on the other. The worker takes over the term
 * dictionary from `dictionary` as it stands; the terms it adds are adopted back into it with each
 * reply, in order, so ids stay the ones the transaction will commit.
 */
export class BackgroundAnalyser {
  private readonly worker: Worker;
  private readonly waiting: Array<{ resolve: (reply: AnalysisReply) => void; reject: (error: Error) => void }> = [];
  private failure: Error | undefined;

  constructor(
    private readonly dictionary: TermDictionary,
    corpusLanguage: Language,
    startWorker: StartWorker,
  ) {
    this.worker = startWorker(WORKER_URL, { workerData: { terms: dictionary.entries(), language: corpusLanguage.code } });
    this.worker.on('message', (reply: AnalysisReply) => {
      for (const [id, term] of reply.added) this.dictionary.adopt(id, term);
      this.waiting.shift()?.resolve(reply);
    });
    const fail = (error: Error) => {
      this.failure ??= error;
      for (const waiter of this.waiting.splice(0)) waiter.reject(error);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the analysis worker stopped (exit code ${code})`)));
  }

  /** Batches sent and not answered yet. */
  get backlog(): number {
    return this.waiting.length;
  }

  /** Term vectors for the documents, in order. */
  async analyse(documents: AnalysisRequest['documents']): Promise<AnalysedDocument[]> {
    return (await this.request(documents)).vectors;
  }

  private request(documents: AnalysisRequest['documents']): Promise<AnalysisReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      const request: AnalysisRequest = { documents: documents.map(({ title, text, metadata }) => ({ title, text, metadata })) };
      this.worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    this.failure ??= new Error('the analysis worker was closed');
    await this.worker.terminate();
  }
}
