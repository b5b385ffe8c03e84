import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isPublicAddress, ProbeImageFetcher } from '../../src/faces/probe-fetch.js';
import { FaceDownstream } from '../support/face-downstream.js';
import { assertEnvelope, createTestApp, json, pngLikeImage, type TestContext, tempDir } from '../support/helper.js';

const IMAGE = pngLikeImage('probe image bytes, fetched from a URL');

describe('isPublicAddress', () => {
  it('refuses loopback, private, link-local, unique-local, metadata and other special addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '::1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '169.254.0.5',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      'fd00:ec2::254',
      'fc12::1',
      'fe80::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      'ff02::1',
      'not-an-ip',
    ]) {
      assert.equal(isPublicAddress(address), false, address);
    }
  });
  it('allows public addresses', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      assert.equal(isPublicAddress(address), true, address);
  });
  it('judges each IPv6 form that embeds an IPv4 address by that address', () => {
    const forms: Array<[string, string, string]> = [
      // [form, embedding 127.0.0.1 (or 10.0.0.1), embedding 8.8.8.8]
      ['IPv4-compatible', '::7f00:1', '::808:808'],
      ['IPv4-compatible, dotted', '::127.0.0.1', '::8.8.8.8'],
      ['IPv4-mapped', '::ffff:7f00:1', '::ffff:808:808'],
      ['IPv4-translated', '::ffff:0:7f00:1', '::ffff:0:808:808'],
      ['IPv4-translated, dotted', '::ffff:0:10.0.0.1', '::ffff:0:8.8.8.8'],
      ['6to4', '2002:7f00:1::', '2002:808:808::1'],
      ['6to4, private', '2002:a00:1::5', '2002:808:808:1::'],
      ['NAT64', '64:ff9b::7f00:1', '64:ff9b::808:808'],
      ['NAT64, dotted', '64:ff9b::169.254.169.254', '64:ff9b::8.8.8.8'],
    ];
    for (const [form, internal, external] of forms) {
      assert.equal(isPublicAddress(internal), false, `${form}: ${internal}`);
      assert.equal(isPublicAddress(external), true, `${form}: ${external}`);
    }
  });
  it('refuses the ranges whose embedded address cannot be judged simply: Teredo and local-use NAT64', () => {
    for (const address of ['2001::7f00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '64:ff9b:1::7f00:1', '64:ff9b:1:ffff::808:808']) {
      assert.equal(isPublicAddress(address), false, address);
    }
    assert.equal(isPublicAddress('2001:4860:4860::8888'), true, 'other 2001: addresses are judged as usual');
  });
});

/**
 * Every server here listens on 127.0.0.1 and no request leaves the machine: the fetcher under test
 * is told to treat 127.0.0.1 alone as public, so that loopback can stand in for the internet while
 * every other address (::1, private, metadata) is refused as it would be in production.
 */
describe('probe_image_url over HTTP', () => {
  const dir = tempDir();
  let server: Server;
  let origin = '';
  let connections = 0;
  let lookups = 0;
  let downstream: FaceDownstream;
  let context: TestContext;
  let key: string;
  const routes = new Map<string, (response: import('node:http').ServerResponse) => void>();

  before(async () => {
    const certFile = join(dir.path, 'cert.pem');
    const keyFile = join(dir.path, 'key.pem');
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
        'subjectAltName=IP:127.0.0.1,DNS:images.test',
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (request, response) => {
      const route = routes.get(request.url!);
      if (route) route(response);
      else response.writeHead(404).end();
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    downstream = await new FaceDownstream().start();
    downstream.behaviour = { kind: 'matches', matches: [{ doc_id: 'p1', confidence: 0.9 }] };
    const probeImages = new ProbeImageFetcher({
      maxBytes: 1000,
      timeoutMs: 500,
      ca: readFileSync(certFile),
      isAllowed: (address) => address === '127.0.0.1',
      resolve: async (hostname) => {
        lookups++;
        return { 'images.test': ['127.0.0.1'], 'internal.test': ['127.0.0.1', '10.0.0.7'], 'metadata.test': ['169.254.169.254'] }[hostname] ?? [];
      },
    });
    context = await createTestApp({ face: downstream.client(), probeImages, settings: { imageMaxBytes: 1000 } });
    key = await context.createKey(10);
    routes.set('/face.jpg', (response) => response.writeHead(200, { 'content-type': 'image/jpeg' }).end(IMAGE));
    routes.set('/drawing.svg', (response) =>
      response.writeHead(200, { 'content-type': 'image/svg+xml' }).end('<svg xmlns="http://www.w3.org/2000/svg"/>'),
    );
    routes.set('/big.jpg', (response) => response.writeHead(200).end(Buffer.alloc(5000)));
    routes.set('/hang.jpg', () => undefined);
    routes.set('/to-loopback6', (response) =>
      response.writeHead(302, { location: `https://[::1]:${(server.address() as AddressInfo).port}/face.jpg` }).end(),
    );
    routes.set('/to-http', (response) => response.writeHead(302, { location: 'http://127.0.0.1/face.jpg' }).end());
    routes.set('/to-internal', (response) => response.writeHead(301, { location: 'https://internal.test/face.jpg' }).end());
    routes.set('/to-good', (response) => response.writeHead(302, { location: '/face.jpg' }).end());
    routes.set('/missing.jpg', (response) => response.writeHead(404).end('gone'));
  });
  after(async () => {
    await context.close();
    await downstream.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    dir.remove();
  });

  const search = (url: string) =>
    context.app.inject({
      method: 'POST',
      url: '/face/search',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({ probe_image_url: url, top_k: 1 }),
    });
  const uncharged = async (url: string, status: number, message: RegExp) => {
    const before = await context.balanceOf(key);
    assertEnvelope(await search(url), status, message);
    assert.equal(await context.balanceOf(key), before, `${url} was charged`);
  };

  it('fetches the image after authentication, forwards it as image_b64 and charges one credit', async () => {
    const before = await context.balanceOf(key);
    const response = await search(`${origin}/face.jpg`);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response).matches, [{ doc_id: 'p1', confidence: 0.9 }]);
    assert.equal(downstream.lastBody().image_b64, IMAGE.toString('base64'));
    assert.equal(downstream.lastBody().probe_image_url, undefined);
    assert.equal(await context.balanceOf(key), before - 1);
  });

  it('follows a redirect to an allowed address', async () => {
    assert.equal((await search(`${origin}/to-good`)).statusCode, 200);
  });

  it('refuses loopback, private and metadata addresses before connecting, for free', async () => {
    const port = (server.address() as AddressInfo).port;
    const before = connections;
    await uncharged(`https://[::1]:${port}/face.jpg`, 400, /::1, which is not a public address/);
    await uncharged(`https://[::ffff:7f00:1]:${port}/face.jpg`, 400, /not a public address/);
    await uncharged(`https://127.0.0.2:${port}/face.jpg`, 400, /not a public address/);
    await uncharged(`https://169.254.169.254/latest/meta-data/`, 400, /169\.254\.169\.254/);
    await uncharged(`https://metadata.test/computeMetadata/v1/`, 400, /169\.254\.169\.254/);
    await uncharged(`https://internal.test:${port}/face.jpg`, 400, /10\.0\.0\.7/);
    await uncharged(`https://nowhere.test/face.jpg`, 400, /no address|could not be resolved/);
    assert.equal(connections, before, 'no refused address was connected to');
  });

  it('checks every redirect like the first URL: loopback, http and private hosts are refused, for free', async () => {
    await uncharged(`${origin}/to-loopback6`, 400, /::1/);
    await uncharged(`${origin}/to-http`, 400, /only https/);
    await uncharged(`${origin}/to-internal`, 400, /10\.0\.0\.7/);
  });

  it('answers 400, uncharged and sending nothing downstream, to a file that is not a JPEG, PNG or WebP', async () => {
    const sent = downstream.received.length;
    await uncharged(`${origin}/drawing.svg`, 400, /probe_image_url is not a JPEG, PNG or WebP image.*not charged/);
    assert.equal(downstream.received.length, sent);
  });

  it('answers 402 at zero balance before resolving or fetching anything', async () => {
    const empty = await context.createKey(0);
    const [lookupsBefore, connectionsBefore] = [lookups, connections];
    for (const url of ['https://images.test/face.jpg', `${origin}/face.jpg`, 'https://host.invalid/x.png']) {
      const response = await context.app.inject({
        method: 'POST',
        url: '/face/search',
        headers: { 'x-api-key': empty, 'content-type': 'application/json' },
        payload: JSON.stringify({ probe_image_url: url }),
      });
      assertEnvelope(response, 402);
    }
    assert.deepEqual([lookups, connections], [lookupsBefore, connectionsBefore], 'no lookup, no connection');
  });

  it('answers 413 past IMAGE_MAX_BYTES, and 400 to a slow or failing server, for free', async () => {
    await uncharged(`${origin}/big.jpg`, 413, /limit of 1000 bytes/);
    await uncharged(`${origin}/hang.jpg`, 400, /no answer within 500 ms/);
    await uncharged(`${origin}/missing.jpg`, 400, /HTTP 404/);
  });
});
