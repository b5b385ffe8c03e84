// Builds the operator console (console/) into dist/console and the customer portal (portal/) into
// dist/portal, both from what they share in web/: for each one script, one stylesheet and the page,
// with nothing fetched from outside at run time. Part of `npm run build` and so of `npm install`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

// Both pages are the one page of web/index.html, named and titled for each.
const pages = {
  console: { title: 'metered-search console', loading: 'Loading the console…' },
  portal: { title: 'Your account · metered-search', loading: 'Loading your account…' },
};
const template = readFileSync('web/index.html', 'utf8');

for (const [name, page] of Object.entries(pages)) {
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
  const html = template.replaceAll('%NAME%', name).replace('%TITLE%', page.title).replace('%LOADING%', page.loading);
  writeFileSync(`${out}/index.html`, html);
}
