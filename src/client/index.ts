export { type AccountListQuery, type AdminClientOptions, type KeyListQuery, MeteredSearchAdmin, type UsageSpanQuery } from './admin-client.js';
export type * from './api-types.js';
export { type CallMeta, type CallOptions, type ClientOptions, MeteredSearchClient, type Result } from './client.js';
export { MeteredSearchError, MeteredSearchNetworkError } from './errors.js';
export type { RetryOptions } from './retry.js';
