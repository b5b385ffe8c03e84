import { createRequire } from 'node:module';

/** The part of onnxruntime-node's API the model workers use; declared here, as the package is an optional install. */
export interface OnnxRuntime {
  InferenceSession: { create(path: string, options?: Record<string, unknown>): Promise<OnnxSession> };
  Tensor: new (type: 'int64', data: BigInt64Array, dims: readonly number[]) => OnnxTensor;
}

export interface OnnxSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, OnnxTensor>): Promise<Record<string, OnnxTensor>>;
}

export interface OnnxTensor {
  readonly data: unknown;
  readonly dims: readonly number[];
}

const require = createRequire(import.meta.url);

export const ONNX_RUNTIME_MISSING =
  'EMBEDDINGS_MODEL_DIR needs onnxruntime-node, which the default install leaves out: run `npm run add:local-model` (docs/operations.md#a-model-inside-the-service)';

/** Whether onnxruntime-node is installed, without loading its native library. */
export function onnxRuntimeInstalled(): boolean {
  try {
    require.resolve('onnxruntime-node');
    return true;
  } catch {
    return false;
  }
}

export function loadOnnxRuntime(): OnnxRuntime {
  return require('onnxruntime-node') as OnnxRuntime;
}
