export { MeteredSearchClient, type CallMeta, type CallOptions, type ClientOptions, type Result } from './client.js';
export { MeteredSearchError, MeteredSearchNetworkError } from './errors.js';
export type { RetryOptions } from './retry.js';
export type * from './api-types.js';
