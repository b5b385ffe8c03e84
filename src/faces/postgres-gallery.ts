import type { PostgresDatabase } from '../platform/postgres-database.js';
import type { FaceGalleryStore, FaceRecord } from './gallery.js';

/** The face gallery in PostgreSQL, shared by every instance. Descriptors are real[]: float32, as the engine makes them. */
export class PostgresFaces implements FaceGalleryStore {
  constructor(private readonly db: PostgresDatabase) {}

  enroll(faces: FaceRecord[]): Promise<void> {
    return this.db.transaction(async (client) => {
      for (const face of faces) {
        // Delete and insert, not upsert: a replaced face takes a new id, which moves version().
        await client.query('DELETE FROM faces WHERE doc_id = $1', [face.docId]);
        await client.query('INSERT INTO faces (doc_id, descriptor, face_file, attributes, engine) VALUES ($1, $2, $3, $4, $5)', [
          face.docId,
          face.descriptor,
          face.faceFile,
          face.attributes === null ? null : JSON.stringify(face.attributes),
          face.engine,
        ]);
      }
    });
  }

  async remove(docId: string): Promise<boolean> {
    return ((await this.db.query('DELETE FROM faces WHERE doc_id = $1', [docId])).rowCount ?? 0) > 0;
  }

  async list(): Promise<FaceRecord[]> {
    const { rows } = await this.db.query<{
      doc_id: string;
      descriptor: number[];
      face_file: string;
      attributes: Record<string, unknown> | null;
      engine: string;
    }>('SELECT doc_id, descriptor, face_file, attributes, engine FROM faces ORDER BY doc_id');
    return rows.map((row) => ({
      docId: row.doc_id,
      descriptor: row.descriptor.map((value) => Math.fround(Number(value))),
      faceFile: row.face_file,
      attributes: row.attributes,
      engine: row.engine,
    }));
  }

  async version(): Promise<string> {
    const { rows } = await this.db.query<{ n: number; top: number }>(
      'SELECT count(*)::integer AS n, coalesce(max(id), 0) AS top FROM faces',
      [],
      'faces-version',
    );
    return `${rows[0].n}:${rows[0].top}`;
  }
}
