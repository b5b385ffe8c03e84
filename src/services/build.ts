import type { Config } from '../config.js';
import type { Store } from '../store/store.js';
import { CreditService } from './credits.js';
import { FaceClient } from './face/face-client.js';
import { SearchService } from './search/search.js';
import type { AppSettings, Services } from './services.js';

export function buildServices(store: Store, config: Config): Services {
  return {
    store,
    credits: new CreditService(store),
    search: new SearchService(store),
    face: config.faceServiceUrl
      ? new FaceClient({
          url: config.faceServiceUrl,
          timeoutMs: config.faceServiceTimeoutMs,
          breakerFailures: config.faceBreakerFailures,
          breakerCooldownMs: config.faceBreakerCooldownMs,
        })
      : undefined,
  };
}

export function appSettings(config: Config): AppSettings {
  return {
    serviceVersion: config.serviceVersion,
    bodyLimitBytes: config.bodyLimitBytes,
    imageMaxBytes: config.imageMaxBytes,
    timeouts: { requestMs: config.requestTimeoutMs, headersMs: config.headersTimeoutMs, keepAliveMs: config.keepAliveTimeoutMs },
  };
}
