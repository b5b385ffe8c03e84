import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/**
 * What the proxy does to one request:
 * - pass: forwards it and relays the answer;
 * - drop-response: forwards it, waits for the whole answer (so the server has charged), then cuts
 *   the connection without relaying anything, as a network failure after the fact would;
 * - cut: cuts the connection without forwarding;
 * - hang: never answers;
 * - answer: answers itself without forwarding.
 */
export type Fault =
  | { kind: 'pass' }
  | { kind: 'drop-response' }
  | { kind: 'cut' }
  | { kind: 'hang' }
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body: string };

export interface SeenRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  fault: Fault['kind'];
  body: string;
}

/** A real HTTP proxy in front of the service that injects the next queued faults, then passes. */
export class FaultProxy {
  readonly faults: Fault[] = [];
  readonly seen: SeenRequest[] = [];
  url = '';
  private server: Server | undefined;

  constructor(private readonly upstream: string) {}

  async start(): Promise<this> {
    this.server = createServer((incoming, outgoing) => void this.handle(incoming, outgoing));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private async handle(incoming: IncomingMessage, outgoing: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const fault = this.faults.shift() ?? { kind: 'pass' };
    const idempotencyKey = incoming.headers['idempotency-key'];
    this.seen.push({
      method: incoming.method!,
      path: incoming.url!,
      idempotencyKey: idempotencyKey as string | undefined,
      fault: fault.kind,
      body: Buffer.concat(chunks).toString(),
    });
    switch (fault.kind) {
      case 'cut':
        incoming.socket.destroy();
        return;
      case 'hang':
        return;
      case 'answer':
        outgoing.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers }).end(fault.body);
        return;
    }
    const headers = { ...incoming.headers };
    delete headers.host;
    delete headers.connection;
    const answer = await request(`${this.upstream}${incoming.url}`, {
      method: incoming.method as 'GET' | 'POST',
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await answer.body.arrayBuffer());
    if (fault.kind === 'drop-response') {
      incoming.socket.destroy();
      return;
    }
    const relayed = Object.fromEntries(
      Object.entries(answer.headers).filter(([name]) => !['connection', 'keep-alive', 'transfer-encoding'].includes(name)),
    );
    outgoing.writeHead(answer.statusCode, relayed as Record<string, string>).end(body);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
