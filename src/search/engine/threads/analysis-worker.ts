import { parentPort, workerData } from 'node:worker_threads';
import { ENGLISH, languageNamed } from '../languages.js';
import { DocumentAnalyser, TermDictionary } from '../term-vector.js';
import type { AnalysisReply, AnalysisRequest } from './background-analyser.js';

// Analyses documents for an ingest running on the main thread; owns the term dictionary while
// the ingest lasts, starting from the snapshot it was given.
const given = workerData as { terms: Array<{ id: number; term: string }>; language: string };
const dictionary = new TermDictionary();
dictionary.load(given.terms);
const analyser = new DocumentAnalyser(dictionary, languageNamed(given.language) ?? ENGLISH);

parentPort!.on('message', (request: AnalysisRequest) => {
  const vectors = request.documents.map((document) => analyser.analyse(document.title, document.text, document.metadata));
  const reply: AnalysisReply = { vectors, added: dictionary.added.splice(0) };
  parentPort!.postMessage(
    reply,
    vectors.map((vector) => vector.terms.buffer as ArrayBuffer),
  );
});
