// Generates src/client/api-types.ts from the service's own OpenAPI document, so the client's types
// come from the route schemas. `npm run generate:client` writes it; test/client/client.test.ts ("drift") fails
// when the committed file differs from what the schemas give.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { appSettings, buildServices } from '../src/services/build.js';
import { SqliteStore } from '../src/store/sqlite-store.js';

type Schema = Record<string, any>;

/** The operations the client names, and the type names they get. */
const OPERATIONS: Array<{ method: string; path: string; name: string; status?: string }> = [
  { method: 'get', path: '/', name: 'Root' },
  { method: 'get', path: '/version', name: 'Version' },
  { method: 'get', path: '/profile', name: 'Profile' },
  { method: 'get', path: '/nettest', name: 'Nettest' },
  { method: 'get', path: '/credits', name: 'Credits' },
  { method: 'get', path: '/document', name: 'Document' },
  { method: 'post', path: '/query', name: 'Query' },
  { method: 'post', path: '/face/search', name: 'FaceSearch' },
  { method: 'get', path: '/usage', name: 'Usage' },
  { method: 'post', path: '/admin/accounts', name: 'AdminCreateAccount', status: '201' },
  { method: 'get', path: '/admin/accounts', name: 'AdminListAccounts' },
  { method: 'get', path: '/admin/accounts/{id}', name: 'AdminGetAccount' },
  { method: 'patch', path: '/admin/accounts/{id}', name: 'AdminUpdateAccount' },
  { method: 'post', path: '/admin/accounts/{id}/keys', name: 'AdminCreateAccountKey', status: '201' },
  { method: 'post', path: '/admin/accounts/{id}/topup', name: 'AdminTopUpAccount' },
  { method: 'put', path: '/admin/accounts/{id}/refill', name: 'AdminSetAccountRefill' },
  { method: 'get', path: '/admin/accounts/{id}/usage', name: 'AdminAccountUsage' },
  { method: 'get', path: '/admin/accounts/{id}/events', name: 'AdminAccountEvents' },
  { method: 'post', path: '/admin/keys', name: 'AdminCreateKey', status: '201' },
  { method: 'get', path: '/admin/keys', name: 'AdminListKeys' },
  { method: 'get', path: '/admin/token', name: 'AdminCurrentToken' },
  { method: 'get', path: '/admin/keys/{id}', name: 'AdminGetKey' },
  { method: 'get', path: '/admin/keys/{id}/charges', name: 'AdminKeyCharges' },
  { method: 'get', path: '/admin/keys/{id}/events', name: 'AdminKeyEvents' },
  { method: 'post', path: '/admin/keys/{id}/topup', name: 'AdminTopUpKey' },
  { method: 'post', path: '/admin/keys/{id}/disable', name: 'AdminKeyStatus' },
  { method: 'put', path: '/admin/keys/{id}/rate', name: 'AdminSetKeyRate' },
  { method: 'post', path: '/admin/keys/{id}/roll', name: 'AdminRollKey' },
  { method: 'patch', path: '/admin/keys/{id}', name: 'AdminUpdateKey' },
  { method: 'put', path: '/admin/keys/{id}/refill', name: 'AdminSetRefill' },
  { method: 'post', path: '/admin/webhooks', name: 'AdminCreateWebhook', status: '201' },
  { method: 'get', path: '/admin/webhooks', name: 'AdminListWebhooks' },
  { method: 'delete', path: '/admin/webhooks/{id}', name: 'AdminDeleteWebhook' },
  { method: 'get', path: '/admin/webhooks/deliveries', name: 'AdminListWebhookDeliveries' },
  { method: 'post', path: '/admin/webhooks/deliveries/{id}/retry', name: 'AdminRetryWebhookDelivery' },
  { method: 'get', path: '/admin/keys/{id}/usage', name: 'AdminKeyUsage' },
  { method: 'get', path: '/admin/usage', name: 'AdminUsage' },
  { method: 'get', path: '/admin/audit-log', name: 'AdminAuditLog' },
  { method: 'get', path: '/admin/documents', name: 'AdminCountDocuments' },
  { method: 'post', path: '/admin/documents', name: 'AdminIngestDocuments' },
  { method: 'post', path: '/admin/search', name: 'AdminSearch' },
  { method: 'get', path: '/admin/synonyms', name: 'AdminGetSynonyms' },
  { method: 'put', path: '/admin/synonyms', name: 'AdminPutSynonyms' },
  { method: 'delete', path: '/admin/documents/{doc_id}', name: 'AdminDeleteDocument' },
];

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function comment(schema: Schema, pad: string): string {
  return schema.description ? `${pad}/** ${String(schema.description).replace(/\*\//g, '* /')} */\n` : '';
}

export function typeOf(schema: Schema, pad = ''): string {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.map((alternative: Schema) => typeOf(alternative, pad)).join(' | ');
  if (schema.enum) return schema.enum.map((value: unknown) => JSON.stringify(value)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ['object'] : [];
  if (types.length > 1) return types.map((type) => typeOf({ ...schema, type }, pad)).join(' | ');
  switch (types[0]) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `Array<${typeOf(schema.items ?? {}, pad)}>`;
    case 'object': {
      const inner = `${pad}  `;
      const required = new Set<string>(schema.required ?? []);
      const lines = Object.entries<Schema>(schema.properties ?? {}).map(
        ([name, property]) =>
          `${comment(property, inner)}${inner}${IDENTIFIER.test(name) ? name : JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, inner)};`,
      );
      const extra = schema.additionalProperties;
      if (extra === true || (extra && typeof extra === 'object' && schema.properties)) lines.push(`${inner}[field: string]: unknown;`);
      else if (extra && typeof extra === 'object') lines.push(`${inner}[field: string]: ${typeOf(extra, inner)};`);
      return lines.length === 0 ? 'Record<string, never>' : `{\n${lines.join('\n')}\n${pad}}`;
    }
    default:
      return 'unknown';
  }
}

/** The text of src/client/api-types.ts for this OpenAPI document. */
export function renderClientTypes(document: Schema): string {
  const parts = [
    "// Generated from the service's OpenAPI document by scripts/client-types.ts. Do not edit:",
    '// change the route schemas and run `npm run generate:client` (a test fails while the two differ).',
    '',
  ];
  for (const { method, path, name, status = '200' } of OPERATIONS) {
    const operation = document.paths?.[path]?.[method];
    if (!operation) throw new Error(`the OpenAPI document has no ${method.toUpperCase()} ${path}`);
    const body = operation.requestBody?.content?.['application/json']?.schema;
    if (body) parts.push(`/** Body of ${method.toUpperCase()} ${path}. */`, `export type ${name}Request = ${typeOf(body)};`, '');
    const ok = operation.responses?.[status]?.content?.['application/json']?.schema;
    if (!ok) throw new Error(`${method.toUpperCase()} ${path} documents no ${status} response`);
    parts.push(`/** ${status} answer of ${method.toUpperCase()} ${path}. */`, `export type ${name}Response = ${typeOf(ok)};`, '');
  }
  const error = document.paths['/query'].post.responses['400'].content['application/json'].schema;
  parts.push('/** Every error answer: status equals the HTTP status code. */', `export type ErrorEnvelope = ${typeOf(error)};`, '');
  return parts.join('\n');
}

/** The OpenAPI document as the service serves it at /openapi.json. */
export async function openApiDocument(): Promise<Schema> {
  const dir = mkdtempSync(join(tmpdir(), 'client-types-'));
  const store = new SqliteStore(dir);
  try {
    const config = loadConfig({ DATA_DIR: dir, FACE_WORKERS: '0' });
    const services = buildServices(store, config, () => undefined);
    const app = await buildApp(services, { settings: appSettings(config) });
    await app.ready();
    const document = (app as unknown as { swagger(): Schema }).swagger();
    await app.close();
    await services.probeImages.close();
    await services.rateLimits.close();
    return JSON.parse(JSON.stringify(document));
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
