// BEIR SciFact for the relevance benchmarks: the corpus, the test queries and their judgments,
// and the scores of a ranking against them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib.js';

export const DATASET = process.env.SCIFACT_DIR ?? join(ROOT, '../shared/datasets/scifact');

export interface Query {
  id: string;
  text: string;
}

export interface Scores {
  ndcg10: number;
  recall100: number;
  mrr10: number;
}

export function readJsonLines<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

export function judgments(): Map<string, Set<string>> {
  const relevant = new Map<string, Set<string>>();
  for (const line of readFileSync(join(DATASET, 'qrels-test.tsv'), 'utf8').split('\n').slice(1).filter(Boolean)) {
    const [queryId, docId, score] = line.split('\t');
    if (Number(score) <= 0) continue;
    if (!relevant.has(queryId!)) relevant.set(queryId!, new Set());
    relevant.get(queryId!)!.add(docId!);
  }
  return relevant;
}

/** Binary-relevance nDCG@10, Recall@100 and MRR@10, averaged over the queries. */
export function score(rankings: Map<string, string[]>, relevant: Map<string, Set<string>>): Scores {
  let ndcg = 0;
  let recall = 0;
  let mrr = 0;
  for (const [queryId, wanted] of relevant) {
    const ranking = rankings.get(queryId) ?? [];
    let dcg = 0;
    ranking.slice(0, 10).forEach((docId, index) => {
      if (wanted.has(docId)) dcg += 1 / Math.log2(index + 2);
    });
    let ideal = 0;
    for (let index = 0; index < Math.min(wanted.size, 10); index++) ideal += 1 / Math.log2(index + 2);
    ndcg += dcg / ideal;
    recall += ranking.slice(0, 100).filter((docId) => wanted.has(docId)).length / wanted.size;
    const first = ranking.slice(0, 10).findIndex((docId) => wanted.has(docId));
    mrr += first === -1 ? 0 : 1 / (first + 1);
  }
  const count = relevant.size;
  return { ndcg10: ndcg / count, recall100: recall / count, mrr10: mrr / count };
}

/** The test queries. */
export function scifactQueries(): Query[] {
  return readJsonLines<{ _id: string; text: string }>(join(DATASET, 'queries.jsonl')).map((query) => ({ id: query._id, text: query.text }));
}
