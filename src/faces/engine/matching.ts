/**
 * Descriptor distance to confidence: a logistic curve centred where the same-person and
 * different-person distances part. Measured on the shared face set (101 photos, 21 people,
 * descriptors of this engine): same-person distances have median 0.40, p95 0.54 and max 0.59;
 * different-person ones p01 0.64 and p05 0.70. So confidence(d) = 1 / (1 + e^((d - 0.60) / 0.04)):
 * 0.99 at the same-person median, 0.81 at its p95, 0.5 at d = 0.60, 0.29 at the different-person
 * p01 and under 0.08 beyond their p05. It depends on the distance only, so it means the same from
 * query to query.
 */
export const CONFIDENCE_MIDPOINT = 0.6;
export const CONFIDENCE_SCALE = 0.04;

/** The default minimum confidence: d <= 0.60 kept every same-person pair of the set and about 1% of the others. */
export const DEFAULT_THRESHOLD = 0.5;

export function confidenceOf(distance: number): number {
  return 1 / (1 + Math.exp((distance - CONFIDENCE_MIDPOINT) / CONFIDENCE_SCALE));
}

export function distance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) {
    const difference = a[index] - b[index];
    sum += difference * difference;
  }
  return Math.sqrt(sum);
}

export interface EnrolledFace {
  docId: string;
  descriptor: Float32Array;
  faceFile: string;
  attributes: Record<string, unknown> | null;
}

export type RankedFace = {
  doc_id: string;
  confidence: number;
  face_file: string;
  attributes: Record<string, unknown>;
};

/** The `topK` nearest enrolled faces at or above `threshold` confidence, best first. */
export function rankFaces(probe: ArrayLike<number>, gallery: EnrolledFace[], topK: number, threshold: number): RankedFace[] {
  return gallery
    .map((face) => ({ face, confidence: confidenceOf(distance(probe, face.descriptor)) }))
    .filter((entry) => entry.confidence >= threshold)
    .sort((a, b) => b.confidence - a.confidence || (a.face.docId < b.face.docId ? -1 : 1))
    .slice(0, topK)
    .map(({ face, confidence }) => ({
      doc_id: face.docId,
      confidence: Number(confidence.toFixed(6)),
      face_file: face.faceFile,
      attributes: face.attributes ?? {},
    }));
}
