import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { tempDir } from '../support/helper.js';

describe('HTTPS', () => {
  const dir = tempDir();
  after(() => dir.remove());

  it('serves HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set', async () => {
    const cert = join(dir.path, 'cert.pem');
    const key = join(dir.path, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const server = await startServer(
      loadConfig({
        DATA_DIR: join(dir.path, 'data'),
        PORT: '0',
        HOST: '127.0.0.1',
        SEED_DEMO: 'false',
        LOG_LEVEL: 'silent',
        FACE_WORKERS: '0',
        TLS_CERT_FILE: cert,
        TLS_KEY_FILE: key,
      }),
    );
    const agent = new Agent({ connect: { ca: readFileSync(cert) } });
    try {
      assert.match(server.url, /^https:\/\//);
      const response = await request(`${server.url}/version`, { dispatcher: agent });
      assert.equal(response.statusCode, 200);
      assert.equal(((await response.body.json()) as { status: number }).status, 200);
      await assert.rejects(request(`${server.url.replace('https:', 'http:')}/version`).then((r) => r.body.text()));
    } finally {
      await agent.close();
      await server.close();
    }
  });

  it('refuses to start with only one of the two TLS files', () => {
    assert.throws(() => loadConfig({ TLS_CERT_FILE: '/tmp/cert.pem' }), /together/);
  });
});
