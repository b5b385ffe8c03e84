import { ApiError } from '../../errors.js';
import type { SearchService } from '../../search/search-service.js';
import type { Step } from '../steps.js';

/** 503 while the index loads after a start (/readyz says so too), before anything is charged. */
export function requireSearchIndexStep(search: SearchService): Step {
  return () => {
    if (!search.ready) throw new ApiError('INDEX_LOADING', undefined, { headers: { 'retry-after': '2' } });
    return undefined;
  };
}
