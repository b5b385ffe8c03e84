import { send } from '../../web/src/request.js';
import type { UsageRow } from '../../web/src/usage.js';

/** The signed-in account as GET /portal/api/account answers it. */
export interface AccountView {
  account: { id: string; name: string; balance: number; expiring: Array<{ credits: number; at: string }> };
  keys: Array<{ id: string; name: string; status: string; created_at: string; last_used_at: string | null; expires_at: string | null }>;
  usage: { from: string; to: string; series: UsageRow[]; by_key: Array<{ key_id: string; endpoint: string; charges: number; credits: number }> };
  charges: Array<{ id: number; key_id: string; endpoint: string; at: string; status: number | null; credits: number }>;
  packs: Array<{ id: string; credits: number; label: string }>;
  how_to_buy: string;
  signed_in_with: 'key' | 'session';
  /** The key this tab signed in with, when it signed in with one. */
  signed_in_key_id?: string;
  csrf_token?: string;
}

/**
 * The portal's API, signed in with an API key (sent in the x-api-key header, never in a URL) or
 * with the session cookie a portal link opened, whose writes carry its CSRF token.
 */
export class PortalApi {
  private csrf: string | undefined;

  constructor(readonly apiKey: string | null) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    if (this.csrf && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' };
    return send<T>(path, init, 'The service did not answer: check your connection and try again.');
  }

  async account(): Promise<AccountView> {
    const view = await this.call<AccountView>('GET', '/portal/api/account');
    this.csrf = view.csrf_token;
    return view;
  }

  rename = (keyId: string, name: string) =>
    this.call<{ id: string; name: string }>('PATCH', `/portal/api/keys/${encodeURIComponent(keyId)}`, { name });
  roll = (keyId: string, graceSeconds: number) =>
    this.call<{ id: string; key: string; old_key_valid_until: string | null }>('POST', `/portal/api/keys/${encodeURIComponent(keyId)}/roll`, {
      grace_seconds: graceSeconds,
    });
  checkout = (packId: string) => this.call<{ url: string }>('POST', '/portal/api/checkout', { pack_id: packId });
  signOut = () => this.call<unknown>('POST', '/portal/api/sign-out', {});
}
