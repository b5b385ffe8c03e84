/**
 * Where a ranking is cut at top_k. An index answers its best `topK` hits and every hit tied with
 * the last of them (withTies), so that the caller, who knows the documents' ids, can break the
 * ties by doc_id and cut (cutAtTopK): equal scores always come back in doc_id order, whichever
 * index or thread found them.
 */

/** The best `topK` hits, best first, and every hit tied with the last of them. */
export function withTies<Hit extends { score: number }>(hits: Hit[], topK: number): Hit[] {
  hits.sort((a, b) => b.score - a.score);
  if (hits.length <= topK) return hits;
  const cut = hits[topK - 1].score;
  let end = topK;
  while (end < hits.length && hits[end].score === cut) end++;
  return hits.slice(0, end);
}

/** The first `topK` hits by score, best first, equal scores in doc_id order. */
export function cutAtTopK<Hit extends { docId: string; score: number }>(hits: Hit[], topK: number): Hit[] {
  hits.sort((a, b) => b.score - a.score || (a.docId < b.docId ? -1 : a.docId > b.docId ? 1 : 0));
  return hits.slice(0, topK);
}
