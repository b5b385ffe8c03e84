import type { Command } from 'commander';
import { FaceEnginePool } from '../../faces/engine/pool.js';
import type { Store } from '../../store/store.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { table } from '../table.js';
import { enrollFaces, readManifest, renderEnroll } from './faces-enroll.js';

export interface EnrolledFaceSummary {
  doc_id: string;
  face_file: string;
  attributes: Record<string, unknown> | null;
  engine: string;
}

export function facesCommands(program: Command, cli: CliContext): void {
  const faces = program.command('faces').description('The gallery of enrolled faces that /face/search searches.');
  faces
    .command('enroll')
    .description('Enroll the faces of a JSONL manifest: {"doc_id", "image" (file path or base64), "face_file", "attributes"?}; all or nothing.')
    .argument('<manifest>', 'JSONL file; image paths are relative to it')
    .option('--json', 'print the result as JSON')
    .action(async (manifest: string, options: { json?: boolean }) => {
      const entries = await readManifest(manifest);
      const engine = new FaceEnginePool(Math.max(1, cli.config().faceWorkers));
      try {
        await engine.ready;
        cli.output(options.json, await cli.withStore((store) => enrollFaces(store, engine, manifest, entries)), renderEnroll);
      } finally {
        await engine.close();
      }
    });
  faces
    .command('list')
    .description('List the enrolled faces.')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
      cli.output(options.json, await cli.withStore(listFaces), renderFaceList);
    });
  faces
    .command('remove')
    .description('Remove an enrolled face.')
    .argument('<doc-id>', 'the doc_id it was enrolled under')
    .option('--json', 'print the result as JSON')
    .action(async (docId: string, options: { json?: boolean }) => {
      cli.output(options.json, await cli.withStore((store) => removeFace(store, docId)), (result) => `Removed face ${result.removed}.`);
    });
}

async function listFaces(store: Store): Promise<EnrolledFaceSummary[]> {
  return (await store.faces.list()).map((face) => ({
    doc_id: face.docId,
    face_file: face.faceFile,
    attributes: face.attributes,
    engine: face.engine,
  }));
}

async function removeFace(store: Store, docId: string): Promise<{ removed: string }> {
  if (!(await store.faces.remove(docId))) throw new CliError(`No enrolled face has doc_id "${docId}" (see "faces list").`);
  return { removed: docId };
}

export function renderFaceList(faces: EnrolledFaceSummary[]): string {
  if (faces.length === 0) return 'No faces enrolled yet. Enroll some with: metered-search faces enroll MANIFEST';
  return table([
    ['DOC_ID', 'FACE_FILE', 'ATTRIBUTES'],
    ...faces.map((face) => [face.doc_id, face.face_file, face.attributes ? JSON.stringify(face.attributes) : '-']),
  ]);
}
