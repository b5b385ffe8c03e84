import { hash, randomBytes } from 'node:crypto';
import type { KeyRecord, KeyStatus, Ledger, TopUpResult } from './ledger.js';

export const API_KEY_PATTERN = /^[0-9a-fA-F]{64}$/;

/** Hex is case-insensitive, so a key and its upper-case spelling hash alike. */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey.toLowerCase(), 'hex');
}

/** Key ids carry a prefix and 16 hex digits, so an id can never be mistaken for a 64-hex key. */
function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

const STATUS_ACTIONS: Record<KeyStatus, string> = { active: 'enable', disabled: 'disable', revoked: 'revoke' };

export type StatusChange =
  | { outcome: 'changed'; key: KeyRecord }
  | { outcome: 'unchanged'; key: KeyRecord }
  | { outcome: 'revoked'; key: KeyRecord }
  | { outcome: 'not-found' };

/** Where operator changes are reported, for the audit log: what was done, to which key, with which figures. */
export type ChangeReport = (action: string, keyId: string, detail: Record<string, unknown>) => Promise<void>;

const UNREPORTED: ChangeReport = async () => undefined;

/** Operator actions on keys, the one implementation behind the CLI and the admin API. */
export class KeyAdmin {
  constructor(
    private readonly ledger: Ledger,
    private readonly report: ChangeReport = UNREPORTED,
  ) {}

  /** `rateLimit`: requests per second for this key; null or absent for the service's default. */
  async create(credits: number, name = '', rateLimit: number | null = null): Promise<{ key: string; record: KeyRecord }> {
    const key = randomBytes(32).toString('hex');
    const record = await this.ledger.createKey({ keyHash: hashApiKey(key), id: newKeyId(), name, credits, rateLimit });
    await this.report('keys.create', record.id, { credits, name, rate: rateLimit });
    return { key, record };
  }

  /** Accepts a plain key (64 hex) or a key id. */
  async find(keyOrId: string): Promise<KeyRecord | undefined> {
    return API_KEY_PATTERN.test(keyOrId) ? this.ledger.findKeyByHash(hashApiKey(keyOrId)) : this.ledger.findKeyById(keyOrId);
  }

  async topUp(keyOrId: string, credits: number, reference: string | null = null): Promise<TopUpResult> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    const result = await this.ledger.topUp(key.id, credits);
    if (result.outcome === 'topped-up') await this.report('keys.topup', key.id, { credits, balance: result.key.balance, reference });
    return result;
  }

  async setRateLimit(keyOrId: string, rateLimit: number | null): Promise<KeyRecord | undefined> {
    const key = await this.find(keyOrId);
    const updated = key && (await this.ledger.setKeyRateLimit(key.id, rateLimit));
    if (updated) await this.report('keys.rate', updated.id, { rate: rateLimit });
    return updated;
  }

  async setStatus(keyOrId: string, status: KeyStatus): Promise<StatusChange> {
    const key = await this.find(keyOrId);
    if (!key) return { outcome: 'not-found' };
    if (key.status === 'revoked') return status === 'revoked' ? { outcome: 'unchanged', key } : { outcome: 'revoked', key };
    if (key.status === status) return { outcome: 'unchanged', key };
    const updated = (await this.ledger.setKeyStatus(key.id, status)) as KeyRecord;
    await this.report(`keys.${STATUS_ACTIONS[status]}`, key.id, { status });
    return { outcome: 'changed', key: updated };
  }
}
