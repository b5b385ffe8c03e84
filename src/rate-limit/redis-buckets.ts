import { Redis } from 'ioredis';
import { type BucketDecision, decide, type TokenBuckets } from './buckets.js';

/**
 * One atomic step per request: refill by the time elapsed on Redis' own clock (so instances with
 * skewed clocks share one bucket correctly), take a token if there is one, and let an idle bucket
 * expire once it would be full anyway. Tokens go back as a string: Redis truncates Lua numbers.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
if tokens == nil then tokens = capacity else tokens = math.min(capacity, tokens + (now - tonumber(state[2])) * rate / 1000) end
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
`;

const CONNECT_TIMEOUT_MS = 2000;

type TakeCommand = (key: string, perSecond: number, capacity: number) => Promise<[number, string]>;

/** Buckets in Redis: the limit holds across every instance that shares REDIS_URL. */
export class RedisBuckets implements TokenBuckets {
  private readonly redis: Redis & { takeToken: TakeCommand };
  private readonly firstReady: Promise<unknown>;
  /** Until then, a request waits for the first connection instead of passing unlimited. */
  private readonly startupDeadline = Date.now() + CONNECT_TIMEOUT_MS;

  constructor(
    url: string,
    private readonly prefix = 'metered-search:rate:',
  ) {
    const redis = new Redis(url, {
      // Fail at once rather than queue while Redis is away; the limiter then lets requests through.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: 500,
    });
    redis.on('error', () => undefined);
    this.firstReady = new Promise((resolve) => redis.once('ready', resolve));
    redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TAKE });
    this.redis = redis as Redis & { takeToken: TakeCommand };
  }

  async take(bucket: string, perSecond: number, capacity: number): Promise<BucketDecision> {
    const wait = this.startupDeadline - Date.now();
    if (this.redis.status !== 'ready' && wait > 0) {
      await Promise.race([this.firstReady, new Promise((resolve) => setTimeout(resolve, wait).unref())]);
    }
    const [allowed, tokens] = await this.redis.takeToken(this.prefix + bucket, perSecond, capacity);
    return decide(allowed === 1, Number(tokens), perSecond, capacity);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
