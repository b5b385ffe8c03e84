/**
 * The house's rules, checked by `npm run lint` (depcruise). Each says which way imports may point;
 * a rule that fails names the file and the import that breaks it.
 */
const DOMAINS = '^src/(admin|billing|corpus|documents|embeddings|faces|idempotency|metrics|platform|portal|rate-limit|search|services|store|synonyms|webhooks)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No import cycles, type-only imports included: a cycle is two concerns that cannot be read apart.',
      severity: 'error',
      from: { path: '^(src|console/src|portal/src|web/src)/' },
      to: { circular: true },
    },
    {
      name: 'engine-stands-alone',
      comment: 'The search engine imports nothing of the service outside its own folder, so it can be measured and reused alone.',
      severity: 'error',
      from: { path: '^src/search/engine/' },
      to: { path: '^src/', pathNot: '^src/search/engine/' },
    },
    {
      name: 'search-above-no-corpus',
      comment: 'The search service and its seam (DocumentIndex) know no corpus: corpus/ implements the seam and keeps its indexes, and imports search/, never the other way.',
      severity: 'error',
      from: { path: '^src/search/' },
      to: { path: '^src/corpus/' },
    },
    {
      name: 'documents-below-embeddings',
      comment: 'Documents and their stores are the floor the corpus and embeddings stand on: they declare what they need (IngestEmbedding) and import neither.',
      severity: 'error',
      from: { path: '^src/documents/' },
      to: { path: '^src/(corpus|embeddings|services|store)/' },
    },
    {
      name: 'portal-and-admin-apart',
      comment: "The customer portal's routes and the admin API's share only what http/ holds for both (schemas/common.ts, static-page.ts).",
      severity: 'error',
      from: { path: '^src/http/(portal|admin)/' },
      to: { path: '^src/http/(portal|admin)/', pathNot: '^src/http/$1/' },
    },
    {
      name: 'fastify-only-in-http',
      comment: 'Only http/, app.ts and server.ts know Fastify: domains are plain TypeScript behind interfaces.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http/|app\\.ts$|server\\.ts$)' },
      to: { path: 'node_modules/(fastify|@fastify/|light-my-request)' },
    },
    {
      name: 'domains-below-http-and-cli',
      comment: 'Data flows one way, http and cli -> services -> stores: no domain imports http/ or cli/.',
      severity: 'error',
      from: { path: DOMAINS },
      to: { path: '^src/(http|cli)/' },
    },
    {
      name: 'config-reads-no-domain',
      comment: 'Configuration is plain data: config.ts checks values against src/rules.ts only, and domains read the Config it makes.',
      severity: 'error',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/', pathNot: '^src/rules\\.ts$' },
    },
    {
      name: 'pages-use-only-the-api-types',
      comment: "The console, the portal and what they share (web/) are clients of the service's API: of its code they import only the generated API types.",
      severity: 'error',
      from: { path: '^(console|portal|web)/' },
      to: { path: '^src/', pathNot: '^src/client/api-types\\.ts$' },
    },
    {
      name: 'pages-share-through-web',
      comment: 'The console and the portal share components, formatting, styles and the request wrapper through web/, never by reaching into each other; web/ imports neither.',
      severity: 'error',
      from: { path: '^(console|portal|web)/' },
      to: { path: '^(console|portal)/', pathNot: '^$1/' },
    },
    {
      name: 'client-stands-alone',
      comment: 'The published client (metered-search/client) carries none of the service: it imports only its own folder.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/client/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^dist/' },
  },
};
