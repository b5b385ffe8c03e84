import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { failureOf } from '../../src/webhooks/webhook-sender.js';
import { guardedLookup, isLinkLocal, webhookUrlProblem } from '../../src/webhooks/webhook-url.js';

describe('webhook URLs', () => {
  it('takes http and https URLs as the WHATWG parser reads them, without credentials', () => {
    assert.equal(webhookUrlProblem('https://hooks.example.com/metered?x=1', false), undefined);
    assert.equal(webhookUrlProblem('http://127.0.0.1:8080/hook', false), undefined, 'loopback is the operator’s own');
    assert.equal(webhookUrlProblem('http://10.0.0.5/hook', false), undefined, 'private addresses too');
    assert.match(webhookUrlProblem('http://[bad', false) ?? '', /not a valid URL/);
    assert.match(webhookUrlProblem('file:///etc/passwd', false) ?? '', /http:\/\/ or https:\/\//);
    assert.match(webhookUrlProblem('https://user:secret@hooks.example.com/', false) ?? '', /user name or password/);
    assert.match(webhookUrlProblem('https://user@hooks.example.com/', false) ?? '', /user name or password/);
  });

  it('refuses link-local and cloud-metadata addresses unless they are allowed', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.0.1/',
      'http://[fe80::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[fd00:ec2::254]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.GOOGLE.INTERNAL./',
    ]) {
      assert.match(webhookUrlProblem(url, false) ?? '', /link-local or cloud-metadata/, url);
      assert.equal(webhookUrlProblem(url, true), undefined, `${url} with WEBHOOK_ALLOW_LINK_LOCAL`);
    }
    assert.deepEqual(['169.254.1.1', 'fe80::abcd', '10.0.0.1', '127.0.0.1', 'not-an-ip'].map(isLinkLocal), [true, true, false, false, false]);
  });

  it('refuses, at connection, a name that resolves to a link-local address', async () => {
    // localhost resolves to loopback: passed through; the guard is what refuses link-local answers.
    const resolved = await new Promise<string>((resolve, reject) =>
      guardedLookup('localhost', {}, (error, address) => (error ? reject(error) : resolve(String(address)))),
    );
    assert.ok(['127.0.0.1', '::1'].includes(resolved), resolved);
  });
});

describe('why a webhook attempt failed', () => {
  let hanging: Server;
  let port: number;
  before(async () => {
    hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    port = (hanging.address() as AddressInfo).port;
  });
  after(() => {
    hanging.closeAllConnections();
    hanging.close();
  });

  const attempt = async (url: string, timeoutMs = 300) => {
    try {
      await fetch(url, { method: 'POST', signal: AbortSignal.timeout(timeoutMs) });
      return 'answered';
    } catch (error) {
      return failureOf(error, timeoutMs);
    }
  };

  it('says dns, refused or timeout, as the operator can act on it', async () => {
    assert.match(await attempt('http://no-such-host.invalid/hook'), /^dns: /);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    assert.match(await attempt(`http://127.0.0.1:${closedPort}/hook`), /^refused: /);
    assert.match(await attempt(`http://127.0.0.1:${port}/hook`), /^timeout: no answer within 300 ms/);
  });
});
