// Builds the operator console (console/) into dist/console: one script, one stylesheet and the page,
// with nothing fetched from outside at run time. Part of `npm run build` and so of `npm install`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const out = 'dist/console';
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { console: 'console/src/main.tsx' },
  outdir: out,
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
});
copyFileSync('console/index.html', `${out}/index.html`);
