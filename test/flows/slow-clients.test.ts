import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { tempDir } from '../support/helper.js';

/** Resolves when the server ends the connection, with how long that took and what it sent. */
function closed(socket: Socket): Promise<{ afterMs: number; received: string }> {
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  return new Promise((resolve) => socket.once('close', () => resolve({ afterMs: Date.now() - started, received })));
}

describe('slow and idle clients', () => {
  const dir = tempDir();
  let server: RunningServer;
  let port: number;

  before(async () => {
    server = await startServer(
      loadConfig({
        DATA_DIR: dir.path,
        PORT: '0',
        HOST: '127.0.0.1',
        SEED_DEMO: 'false',
        LOG_LEVEL: 'silent',
        FACE_WORKERS: '0',
        HEADERS_TIMEOUT_MS: '600',
        REQUEST_TIMEOUT_MS: '1200',
        KEEP_ALIVE_TIMEOUT_MS: '500',
      }),
    );
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    await server.close();
    dir.remove();
  });

  const trickle = (socket: Socket, text: string, everyMs: number) => {
    let index = 0;
    const timer = setInterval(() => {
      if (index >= text.length || socket.destroyed) return clearInterval(timer);
      socket.write(text[index++]);
    }, everyMs);
    socket.once('close', () => clearInterval(timer));
  };

  it('cuts off a client trickling its headers, a client trickling its body and an idle connection, serving others meanwhile', async () => {
    const headers = connect(port, '127.0.0.1');
    trickle(headers, `GET /version HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`, 50);
    const body = connect(port, '127.0.0.1');
    body.write('POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n');
    trickle(body, `{"query":"${'x'.repeat(990)}`, 50);
    const idle = Array.from({ length: 300 }, () => connect(port, '127.0.0.1'));
    const outcomes = Promise.all([closed(headers), closed(body), ...idle.map(closed)]);

    const latencies: number[] = [];
    const deadline = Date.now() + 1500;
    while (Date.now() < deadline) {
      const started = Date.now();
      const response = await request(`${server.url}/version`);
      await response.body.dump();
      assert.equal(response.statusCode, 200);
      latencies.push(Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(Math.max(...latencies) < 500, `normal callers stay served (slowest ${Math.max(...latencies)} ms)`);

    const [headersOutcome, bodyOutcome, ...idleOutcomes] = await outcomes;
    assert.ok(headersOutcome!.afterMs < 3000, `header trickler cut off after ${headersOutcome!.afterMs} ms`);
    assert.doesNotMatch(headersOutcome!.received, /^HTTP\/1.1 200/);
    assert.ok(bodyOutcome!.afterMs < 4000, `body trickler cut off after ${bodyOutcome!.afterMs} ms`);
    assert.doesNotMatch(bodyOutcome!.received, /^HTTP\/1.1 200/);
    assert.ok(
      idleOutcomes.every((outcome) => outcome.afterMs < 4000),
      'idle connections closed',
    );
  });
});
