import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A Checkout Session create request as Stripe's library sent it: its form fields, flattened as sent. */
export interface RecordedCheckout {
  authorization: string | undefined;
  form: Record<string, string>;
}

/**
 * A stand-in for Stripe's API on 127.0.0.1, for the tests only: it records the form of every
 * POST /v1/checkout/sessions and answers a Checkout Session object as Stripe's API reference shows
 * one (id cs_test_…, object checkout.session, url where the customer pays). GET /pay/{id} is that
 * payment page, a plain page the browser can land on.
 */
export async function startStripeStandIn(): Promise<{
  url: string;
  checkouts: RecordedCheckout[];
  failNext: () => void;
  close: () => Promise<void>;
}> {
  const checkouts: RecordedCheckout[] = [];
  let failing = false;
  const body = (request: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let text = '';
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => resolve(text));
    });
  const server = createServer(async (request, response) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (request.method === 'POST' && request.url === '/v1/checkout/sessions') {
      const form = Object.fromEntries(new URLSearchParams(await body(request)));
      if (failing) {
        failing = false;
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'No such price' } }));
        return;
      }
      checkouts.push({ authorization: request.headers.authorization, form });
      const id = `cs_test_${checkouts.length}`;
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${checkouts.length}` });
      response.end(
        JSON.stringify({
          id,
          object: 'checkout.session',
          mode: 'payment',
          status: 'open',
          payment_status: 'unpaid',
          client_reference_id: form.client_reference_id ?? null,
          metadata: { credits: form['metadata[credits]'], pack_id: form['metadata[pack_id]'] },
          success_url: form.success_url,
          cancel_url: form.cancel_url,
          url: `${base}/pay/${id}`,
        }),
      );
      return;
    }
    if (request.method === 'GET' && request.url?.startsWith('/pay/')) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><title>Stand-in checkout</title><h1>Stand-in checkout</h1>');
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    checkouts,
    failNext: () => {
      failing = true;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
