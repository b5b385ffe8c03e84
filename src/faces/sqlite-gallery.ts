import type Database from 'better-sqlite3';
import type { FaceGalleryStore, FaceRecord } from './gallery.js';

interface FaceRow {
  doc_id: string;
  descriptor: Buffer;
  face_file: string;
  attributes: string | null;
  engine: string;
}

/** The face gallery in the ledger database; descriptors as 128 little-endian float32s. */
export class SqliteFaces implements FaceGalleryStore {
  private readonly sql;

  constructor(private readonly db: Database.Database) {
    this.sql = {
      remove: db.prepare('DELETE FROM faces WHERE doc_id = ?'),
      insert: db.prepare('INSERT INTO faces (doc_id, descriptor, face_file, attributes, engine, enrolled_at) VALUES (?, ?, ?, ?, ?, ?)'),
      list: db.prepare('SELECT doc_id, descriptor, face_file, attributes, engine FROM faces ORDER BY doc_id'),
      // AUTOINCREMENT ids never come back, so a replaced face moves the maximum too.
      version: db.prepare('SELECT count(*) AS n, coalesce(max(id), 0) AS top FROM faces'),
    };
  }

  async enroll(faces: FaceRecord[]): Promise<void> {
    const at = new Date().toISOString();
    this.db
      .transaction(() => {
        for (const face of faces) {
          this.sql.remove.run(face.docId);
          const descriptor = Buffer.from(Float32Array.from(face.descriptor).buffer);
          this.sql.insert.run(face.docId, descriptor, face.faceFile, face.attributes ? JSON.stringify(face.attributes) : null, face.engine, at);
        }
      })
      .immediate();
  }

  async remove(docId: string): Promise<boolean> {
    return this.sql.remove.run(docId).changes > 0;
  }

  async list(): Promise<FaceRecord[]> {
    return (this.sql.list.all() as FaceRow[]).map((row) => ({
      docId: row.doc_id,
      descriptor: Array.from(
        new Float32Array(row.descriptor.buffer.slice(row.descriptor.byteOffset, row.descriptor.byteOffset + row.descriptor.length)),
      ),
      faceFile: row.face_file,
      attributes: row.attributes === null ? null : (JSON.parse(row.attributes) as Record<string, unknown>),
      engine: row.engine,
    }));
  }

  async version(): Promise<string> {
    const { n, top } = this.sql.version.get() as { n: number; top: number };
    return `${n}:${top}`;
  }
}
