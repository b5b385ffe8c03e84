import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ENGINE_VERSION } from '../../faces/engine/describe.js';
import type { FaceEnginePool } from '../../faces/engine/pool.js';
import type { FaceRecord } from '../../faces/gallery.js';
import { normaliseBase64 } from '../../faces/image.js';
import type { Store } from '../../store/store.js';
import { CliError } from '../errors.js';

export interface EnrollSummary {
  manifest: string;
  enrolled: number;
  /** Faces found only inside a grey border (tight crops). */
  padded: number;
  seconds: number;
}

interface ManifestLine {
  doc_id?: unknown;
  image?: unknown;
  face_file?: unknown;
  attributes?: unknown;
}

async function imageBytes(image: string, base: string, line: number): Promise<Buffer> {
  try {
    return await readFile(resolve(base, image));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENAMETOOLONG') throw error;
  }
  const decoded = normaliseBase64(image);
  if (!decoded.ok) throw new CliError(`line ${line}: "image" is neither a readable file nor base64 (${decoded.reason})`);
  return Buffer.from(decoded.base64, 'base64');
}

/** A manifest's line, checked, with its image's bytes read. */
export interface ManifestEntry {
  line: number;
  docId: string;
  faceFile: string;
  attributes: Record<string, unknown> | null;
  image: Buffer;
}

/**
 * Reads a JSONL manifest ({"doc_id", "image": file path or base64, "face_file", "attributes"?}):
 * the first line that is invalid, or whose image cannot be read, is reported before any model loads.
 */
export async function readManifest(manifest: string): Promise<ManifestEntry[]> {
  const base = dirname(resolve(manifest));
  const lines = (await readFile(manifest, 'utf8')).split('\n');
  const entries: ManifestEntry[] = [];
  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    const line = index + 1;
    let parsed: ManifestLine;
    try {
      parsed = JSON.parse(text) as ManifestLine;
    } catch {
      throw new CliError(`line ${line}: not valid JSON`);
    }
    if (typeof parsed.doc_id !== 'string' || parsed.doc_id.trim() === '') throw new CliError(`line ${line}: "doc_id" must be a non-empty string`);
    if (typeof parsed.image !== 'string' || parsed.image === '') throw new CliError(`line ${line}: "image" must be a file path or base64`);
    if (typeof parsed.face_file !== 'string') throw new CliError(`line ${line}: "face_file" must be a string (the URL to report)`);
    const attributes = parsed.attributes ?? null;
    if (attributes !== null && (typeof attributes !== 'object' || Array.isArray(attributes))) {
      throw new CliError(`line ${line}: "attributes" must be an object when present`);
    }
    entries.push({
      line,
      docId: parsed.doc_id,
      faceFile: parsed.face_file,
      attributes: attributes as Record<string, unknown> | null,
      image: await imageBytes(parsed.image, base, line),
    });
  }
  return entries;
}

/**
 * Describes every image of the manifest on the engine's threads and enrolls all of them in one
 * transaction: a line whose image is undecodable or shows no face is reported and nothing is written.
 */
export async function enrollFaces(store: Store, engine: FaceEnginePool, manifest: string, entries: ManifestEntry[]): Promise<EnrollSummary> {
  const started = performance.now();
  let padded = 0;
  const faces: FaceRecord[] = await Promise.all(
    entries.map(async (entry) => {
      const description = await engine.describe(entry.image);
      if (description.kind === 'undecodable') throw new CliError(`line ${entry.line}: the image could not be decoded (${description.message})`);
      if (description.kind === 'no-face') throw new CliError(`line ${entry.line}: no face was found in the image of "${entry.docId}"`);
      if (description.padded) padded++;
      return {
        docId: entry.docId,
        descriptor: description.descriptor,
        faceFile: entry.faceFile,
        attributes: entry.attributes,
        engine: ENGINE_VERSION,
      };
    }),
  );
  await store.faces.enroll(faces);
  return { manifest, enrolled: faces.length, padded, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) };
}

export function renderEnroll(summary: EnrollSummary): string {
  return `Enrolled ${summary.enrolled} faces from ${summary.manifest} in ${summary.seconds} s (${summary.padded} found only inside a border: tight crops).`;
}
