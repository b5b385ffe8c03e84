/** A face in the gallery that /face/search searches, with the engine that described it. */
export interface FaceRecord {
  docId: string;
  descriptor: number[];
  faceFile: string;
  attributes: Record<string, unknown> | null;
  engine: string;
}

/** The enrolled faces; sqlite-gallery.ts and postgres-gallery.ts implement it. */
export interface FaceGalleryStore {
  /** Adds or replaces (by doc_id) every face given, in one transaction: all or nothing. */
  enroll(faces: FaceRecord[]): Promise<void>;
  remove(docId: string): Promise<boolean>;
  list(): Promise<FaceRecord[]>;
  /** A value that changes whenever the gallery does, so a cached copy knows when to reload. */
  version(): Promise<string>;
}
