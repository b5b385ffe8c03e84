import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../errors.js';

/** Where `npm run build` puts the console and the portal: the same place from src/ and from dist/. */
const pageDir = (name: string) => fileURLToPath(new URL(`../../dist/${name}/`, import.meta.url));

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

// Everything from this origin and nothing else: the console must work on a private network, and an
// injected script could not send the admin token (or, in the portal, an API key) anywhere.
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

interface Asset {
  body: Buffer;
  type: string;
}

function readAssets(dir: string): Map<string, Asset> {
  if (!existsSync(dir)) return new Map();
  return new Map(
    readdirSync(dir)
      .filter((name) => CONTENT_TYPES[extname(name)])
      .map((name) => [name, { body: readFileSync(join(dir, name)), type: CONTENT_TYPES[extname(name)] as string }]),
  );
}

/**
 * GET /{name}: a static page built from its own folder (the operator console, which signs in with an
 * admin token and calls only the admin API; the customer portal, which calls only /portal/api).
 */
export function registerPage(app: FastifyInstance, name: 'console' | 'portal', dir = pageDir(name)): void {
  const assets = readAssets(dir);
  const send = (reply: FastifyReply, file: string) => {
    const asset = assets.get(file);
    if (!asset) throw new ApiError('NOT_FOUND', assets.size === 0 ? `The ${name} is not built: run npm run build.` : `No ${name} file "${file}".`);
    return reply.headers(SECURITY_HEADERS).type(asset.type).send(asset.body);
  };
  const page = { schema: { hide: true } };
  app.get(`/${name}`, page, async (_request, reply) => send(reply, 'index.html'));
  app.get(`/${name}/`, page, async (_request, reply) => send(reply, 'index.html'));
  app.get(`/${name}/:file`, page, async (request, reply) => send(reply, (request.params as { file: string }).file));
}
