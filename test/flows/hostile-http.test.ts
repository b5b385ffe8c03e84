import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KeyAdmin } from '../../src/billing/key-admin.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { type ChildServer, spawnServer } from '../support/child-server.js';
import { eventually, tempDir } from '../support/helper.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are, with no client library to tidy them, and reads the answer until the server closes. */
function raw(port: number, bytes: string, options: { trickleMs?: number } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', ...rest] = received.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    if (options.trickleMs) socket.write(bytes.slice(0, 20));
    else socket.end(bytes);
  });
}

describe('hostile HTTP: every answer is the envelope, and no log line holds a key', () => {
  const dir = tempDir();
  let server: ChildServer;
  let port = 0;
  let key = '';

  before(async () => {
    const seed = new SqliteStore(dir.path);
    key = (await new KeyAdmin(seed.ledger).create(100, 'hostile')).key;
    await seed.close();
    server = await spawnServer({ DATA_DIR: dir.path, LOG_LEVEL: 'trace', HEADERS_TIMEOUT_MS: '500', REQUEST_TIMEOUT_MS: '800' });
    port = Number(new URL(server.url).port);
  });
  after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
    dir.remove();
  });

  const assertEnvelope = (answer: RawAnswer, status: number, what: string) => {
    assert.equal(answer.status, status, `${what}: ${answer.body}`);
    assert.match(answer.headers['content-type'] ?? '', /^application\/json/, what);
    assert.match(answer.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, `${what}: x-request-id`);
    const body = JSON.parse(answer.body) as { status: number; message: string };
    assert.equal(body.status, status, what);
    assert.ok(typeof body.message === 'string' && body.message.length > 10, what);
  };

  it('answers requests the HTTP parser refuses with a 400, 431 or 408 envelope', async () => {
    const cases: Array<[string, number, string]> = [
      ['a control byte in a header', 400, `GET /credits HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nX-Bad: a\x01b\r\n\r\n`],
      ['a folded header (obs-fold)', 400, `GET /credits HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nX-Folded: a\r\n  b\r\n\r\n`],
      [
        'Content-Length with Transfer-Encoding',
        400,
        `POST /query HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      ],
      [
        'two different Content-Lengths',
        400,
        `POST /query HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      ],
      ['headers over 16 KB', 431, `GET /credits HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ];
    for (const [what, status, bytes] of cases) assertEnvelope(await raw(port, bytes), status, what);
    assertEnvelope(await raw(port, `GET /credits HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n`, { trickleMs: 1 }), 408, 'headers never finished');
  });

  it('answers an unmet Expect with a 417 envelope and a path that is not a URL with a 400 envelope', async () => {
    assertEnvelope(
      await raw(port, `GET /credits HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nExpect: 999-foo\r\nConnection: close\r\n\r\n`),
      417,
      'Expect',
    );
    assertEnvelope(await raw(port, `GET /%zz HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`), 400, '/%zz');
  });

  it('logs none of those requests with their raw bytes: no key at any level', async () => {
    await eventually(async () => assert.match(server.output(), /client error/));
    const logs = server.output().toLowerCase();
    assert.ok(!logs.includes(key.slice(8, 40)), 'part of the API key appears in the logs');
    assert.ok(!logs.includes('rawpacket'), 'a raw packet was logged');
  });
});
