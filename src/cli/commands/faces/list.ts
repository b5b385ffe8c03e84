import type { Store } from '../../../store/store.js';

export interface EnrolledFaceSummary {
  doc_id: string;
  face_file: string;
  attributes: Record<string, unknown> | null;
  engine: string;
}

export async function listFaces(store: Store): Promise<EnrolledFaceSummary[]> {
  return (await store.faces.list()).map((face) => ({
    doc_id: face.docId,
    face_file: face.faceFile,
    attributes: face.attributes,
    engine: face.engine,
  }));
}
