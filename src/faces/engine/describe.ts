import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';

/** What made a descriptor; stored with each enrolled face, since descriptors of other engines do not compare. */
export const ENGINE_VERSION =
  '@vladmandic/face-api@1.7.15 ssdMobilenetv1(0.4)+landmark68+recognition; tfjs-wasm@4.22.0; sharp@0.35.5 fit 1024; grey border 0.3, 1.0 when no face';

/** Longest side an image is scaled down to before detection. */
const MAX_SIDE = 1024;
/** sharp refuses inputs with more pixels than this before decoding them (a decompression bomb). */
const MAX_INPUT_PIXELS = 50_000_000;
const MIN_CONFIDENCE = 0.4;
/**
 * Tight crops (a face filling the frame) defeat the detector, which was trained on faces smaller
 * than their frame. Each retry sets the image in a neutral border this fraction of its longest side
 * wide on every side, so the face fills less of the frame: 0.3 found 20 of the 26 faces of the shared
 * set's 150 px crops that needed help, 1.0 (the face a third of the frame) the last 6, all with
 * detector scores of 0.67 or more. Every face returned is a detection; none is assumed.
 */
const PAD_FRACTIONS = [0.3, 1.0];
const PAD_GREY = 128;

export type Description = { kind: 'face'; descriptor: number[]; padded: boolean } | { kind: 'no-face' } | { kind: 'undecodable'; message: string };

type FaceApi = typeof import('@vladmandic/face-api');
let loaded: Promise<{ faceapi: FaceApi; tf: typeof import('@tensorflow/tfjs') }> | undefined;

/** Loads TensorFlow.js on its WebAssembly backend and the three models, once per thread. */
export function loadModels(): Promise<{ faceapi: FaceApi; tf: typeof import('@tensorflow/tfjs') }> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const tf = require('@tensorflow/tfjs') as typeof import('@tensorflow/tfjs');
    const wasm = require('@tensorflow/tfjs-backend-wasm') as { setWasmPaths(prefix: string, usePlatformFetch?: boolean): void };
    // face-api's default entry needs tfjs-node, which cannot be installed here: take the wasm build.
    const faceapi = require('@vladmandic/face-api/dist/face-api.node-wasm.js') as FaceApi;
    // A file path read by Emscripten itself: tfjs' own loader would fetch() it, which file paths fail.
    wasm.setWasmPaths(`${dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'))}/dist/`, false);
    await tf.setBackend('wasm');
    await tf.ready();
    const models = join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'model');
    await faceapi.nets.ssdMobilenetv1.loadFromDisk(models);
    await faceapi.nets.faceLandmark68Net.loadFromDisk(models);
    await faceapi.nets.faceRecognitionNet.loadFromDisk(models);
    return { faceapi, tf };
  })();
  return loaded;
}

interface Raw {
  data: Buffer;
  width: number;
  height: number;
}

async function decode(image: Buffer): Promise<Raw> {
  const { data, info } = await sharp(image, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
    .rotate()
    .resize(MAX_SIDE, MAX_SIDE, { fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

async function padded(image: Raw, fraction: number): Promise<Raw> {
  const border = Math.round(Math.max(image.width, image.height) * fraction);
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extend({ top: border, bottom: border, left: border, right: border, background: { r: PAD_GREY, g: PAD_GREY, b: PAD_GREY } })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * The 128-d descriptor of the most confident face found. An image where the
 * detector finds none is tried again inside wider and wider grey borders (tight crops); still none is no-face.
 */
export async function describe(image: Buffer): Promise<Description> {
  const { faceapi, tf } = await loadModels();
  let original: Raw;
  try {
    original = await decode(image);
  } catch (error) {
    return { kind: 'undecodable', message: (error as Error).message };
  }
  for (const pad of [0, ...PAD_FRACTIONS]) {
    const decoded = pad > 0 ? await padded(original, pad) : original;
    const tensor = tf.tensor3d(
      new Uint8Array(decoded.data.buffer, decoded.data.byteOffset, decoded.data.length),
      [decoded.height, decoded.width, 3],
      'int32',
    );
    try {
      const found = await faceapi
        .detectAllFaces(tensor as never, new faceapi.SsdMobilenetv1Options({ minConfidence: MIN_CONFIDENCE }))
        .withFaceLandmarks()
        .withFaceDescriptors();
      if (found.length > 0) {
        const best = found.reduce((a, b) => (b.detection.score > a.detection.score ? b : a));
        return { kind: 'face', descriptor: Array.from(best.descriptor), padded: pad > 0 };
      }
    } finally {
      tensor.dispose();
    }
  }
  return { kind: 'no-face' };
}
