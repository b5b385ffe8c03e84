// Builds the operator console (console/) into dist/console and the customer portal (portal/) into
// dist/portal: for each one script, one stylesheet and the page, with nothing fetched from outside
// at run time. Part of `npm run build` and so of `npm install`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

for (const name of ['console', 'portal']) {
  const out = `dist/${name}`;
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: { [name]: `${name}/src/main.tsx` },
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
  copyFileSync(`${name}/index.html`, `${out}/index.html`);
}
