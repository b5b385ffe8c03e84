import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiDocument, renderClientTypes } from './client-types.js';

const target = fileURLToPath(new URL('../src/client/api-types.ts', import.meta.url));
writeFileSync(target, renderClientTypes(await openApiDocument()));
console.log(`wrote ${target}`);
