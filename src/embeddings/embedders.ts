import type { Embedder, EmbeddingsConfig, LocalModelConfig } from './embedder.js';
import { LocalEmbedder } from './local/local-embedder.js';
import { OpenAiEmbedder } from './openai-embedder.js';

/** One set of model workers per folder in a process: queries and ingests share them, as they share the cores. */
const localModels = new Map<string, LocalEmbedder>();

/**
 * The embedder the configuration names: the endpoint (with at most `retries` retries, when given),
 * or the model folder's workers, started on first use. A folder that cannot be used throws a
 * ModelFolderError naming the file.
 */
export function embedderOf(config: EmbeddingsConfig, retries?: number): Embedder {
  if ('modelDir' in config) return localModel(config);
  return new OpenAiEmbedder(retries === undefined ? config : { ...config, retries: Math.min(config.retries, retries) });
}

function localModel(config: LocalModelConfig): LocalEmbedder {
  const key = JSON.stringify([config.modelDir, config.model, config.threads, config.batchSize]);
  let model = localModels.get(key);
  if (!model) {
    model = LocalEmbedder.open(config.modelDir, {
      threads: config.threads,
      batchSize: config.batchSize,
      ...(config.model ? { name: config.model } : {}),
    });
    localModels.set(key, model);
  }
  return model;
}
