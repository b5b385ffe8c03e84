import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaceClient } from '../../src/faces/face-client.js';

export type DownstreamBehaviour =
  | { kind: 'matches'; matches: unknown[] }
  | { kind: 'status'; status: number; body: string; contentType?: string }
  | { kind: 'hang' }
  | { kind: 'destroy' };

export interface ReceivedRequest {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A real HTTP server standing in for the biometric service; its behaviour is set per test. */
export class FaceDownstream {
  behaviour: DownstreamBehaviour = { kind: 'matches', matches: [] };
  readonly received: ReceivedRequest[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.method === 'POST') {
          this.received.push({ method: request.method, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        }
        const behaviour = this.behaviour;
        switch (behaviour.kind) {
          case 'matches':
            response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ matches: behaviour.matches }));
            return;
          case 'status':
            response.writeHead(behaviour.status, { 'content-type': behaviour.contentType ?? 'application/json' }).end(behaviour.body);
            return;
          case 'hang':
            return;
          case 'destroy':
            request.socket.destroy();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/search`;
    return this;
  }

  lastBody(): Record<string, unknown> {
    return JSON.parse(this.received.at(-1)!.body);
  }

  client(options: { timeoutMs?: number; breakerFailures?: number; breakerCooldownMs?: number } = {}): FaceClient {
    return new FaceClient({
      url: this.url,
      timeoutMs: options.timeoutMs ?? 2000,
      breakerFailures: options.breakerFailures ?? 5,
      breakerCooldownMs: options.breakerCooldownMs ?? 10_000,
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
