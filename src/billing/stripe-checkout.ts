import type Stripe from 'stripe';
import type { CreditPack } from '../rules.js';

/** Where a checkout sends the browser back: after paying, and after giving up. */
export interface CheckoutReturn {
  successUrl: string;
  cancelUrl: string;
}

/**
 * Stripe Checkout Sessions for credit packs, through Stripe's own library. The session names the
 * account as client_reference_id and the credits in metadata.credits: the Stripe webhook credits the
 * account once per paid session (POST /billing/stripe/webhook). `apiBase` (STRIPE_API_BASE) points
 * the library at another host, such as a test's stand-in. The library is loaded at the first
 * checkout, not at start: it takes 0.1-0.2 s to load, which no start should wait for.
 */
export class StripeCheckout {
  private client: Promise<Stripe> | undefined;

  constructor(
    private readonly secretKey: string,
    readonly packs: readonly CreditPack[],
    private readonly apiBase?: string,
  ) {}

  private stripe(): Promise<Stripe> {
    this.client ??= import('stripe').then(({ default: Library }) => {
      const base = this.apiBase === undefined ? undefined : new URL(this.apiBase);
      return new Library(this.secretKey, {
        maxNetworkRetries: 1,
        timeout: 10_000,
        ...(base && {
          host: base.hostname,
          port: base.port === '' ? undefined : Number(base.port),
          protocol: base.protocol === 'http:' ? 'http' : 'https',
        }),
      });
    });
    return this.client;
  }

  pack(id: string): CreditPack | undefined {
    return this.packs.find((pack) => pack.id === id);
  }

  /** The page where the customer pays for the pack. */
  async create(pack: CreditPack, accountId: string, back: CheckoutReturn): Promise<{ id: string; url: string }> {
    const session = await (await this.stripe()).checkout.sessions.create({
      mode: 'payment',
      line_items: [{ price: pack.price_id, quantity: 1 }],
      client_reference_id: accountId,
      metadata: { credits: String(pack.credits), pack_id: pack.id },
      success_url: back.successUrl,
      cancel_url: back.cancelUrl,
    });
    if (!session.url) throw new Error(`Stripe answered checkout session ${session.id} without a url`);
    return { id: session.id, url: session.url };
  }
}
