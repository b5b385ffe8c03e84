import { readFileSync } from 'node:fs';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp, loggerOptions } from './app.js';
import { BillingUpkeep } from './billing/upkeep.js';
import type { Config } from './config.js';
import { every } from './platform/periodic.js';
import { appSettings, buildServices } from './services/build.js';
import type { Services } from './services/services.js';
import { openStore } from './store/open.js';
import type { Store } from './store/store.js';
import { WebhookSender } from './webhooks/webhook-sender.js';

const IDEMPOTENCY_PURGE_MS = 10 * 60 * 1000;
/** How often grants whose time has come are expired and webhooks sent: the most either lags. */
const UPKEEP_INTERVAL_MS = 1000;
/** An endpoint that has not answered by then has failed this attempt. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** The endpoint WEBHOOK_URL and WEBHOOK_SECRET set, rewritten at each start. */
const ENV_WEBHOOK_ID = 'whep_env';

export interface RunningServer {
  app: FastifyInstance;
  url: string;
  /** Where the admin API listens when it has a listener of its own (ADMIN_PORT). */
  adminUrl?: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /**
   * Listen only once the search index is loaded and the face engine warm. For cluster workers: the
   * primary hands connections to any worker that listens, and one still loading would answer 503.
   */
  listenWhenReady?: boolean;
  /** Told the addresses as soon as they listen: before the index has loaded, while /readyz answers 503. */
  onListening?: (addresses: { url: string; adminUrl?: string }) => void;
}

/**
 * Opens the store, builds the app, listens, then loads the search index and warms the face engine
 * (/healthz answers meanwhile, /readyz says what is loading); resolves once it is ready.
 * `close` finishes the requests in flight, then closes the store.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  let app: FastifyInstance | undefined;
  const warn = (message: string, error: unknown) => app?.log.warn({ err: error }, message);
  const store = await openStore(config, { longRunning: true, warn });
  const services = buildServices(store, config, warn);
  const https =
    config.tlsCertFile && config.tlsKeyFile ? { cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile) } : undefined;
  const appOptions = { settings: appSettings(config), logger: loggerOptions(config.logLevel), https };
  app = await buildApp(services, { ...appOptions, plane: config.admin ? 'public' : 'all' });
  const adminApp = config.admin ? await buildApp(services, { ...appOptions, plane: 'admin' }) : undefined;
  const apps = adminApp ? [app, adminApp] : [app];
  const log = app.log;
  const upkeep = await startUpkeep(store, services, config, log);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await upkeep.stop();
      await Promise.all(apps.map(closeDraining));
      await services.face?.close();
      await services.probeImages.close();
      await services.rateLimits.close();
      await store.close();
    })());

  const scheme = https ? 'https' : 'http';
  const addresses = () => ({
    url: urlOf(app, scheme, config.host),
    adminUrl: adminApp && config.admin && urlOf(adminApp, scheme, config.admin.host),
  });
  const listen = async () => {
    await app.listen({ port: config.port, host: config.host });
    if (adminApp && config.admin) await adminApp.listen(config.admin);
    options.onListening?.(addresses());
  };
  probeEmbedder(services, log);
  try {
    // A model run in process loads its file first (under a second): one that cannot be loaded stops the start, named.
    await services.search.embeddings?.embedder.ready;
    if (!options.listenWhenReady) await listen();
    // The index takes seconds to build at a million documents (under one to read back from disk),
    // and the face models to warm up: before the first query, not during it.
    const loading = performance.now();
    const origin = await services.search.prepare();
    const seconds = Number(((performance.now() - loading) / 1000).toFixed(2));
    log.info({ seconds }, origin === 'segments' ? 'search index read from disk' : 'search index built from the stored documents');
    const change = services.search.languageChange();
    if (change)
      log.info(
        change,
        `SEARCH_LANGUAGE is now ${change.to} (was ${change.from}): ${change.documents} documents without a language of their own were analysed again`,
      );
    await services.face?.ready;
    if (options.listenWhenReady) await listen();
  } catch (error) {
    await close();
    throw error;
  }
  return { app, ...addresses(), close };
}

/** Asks the embedding model for one vector at start, so that a misconfigured or unreachable one is logged before a caller finds it. */
function probeEmbedder(services: Services, log: FastifyBaseLogger): void {
  const embedder = services.search.embeddings?.embedder;
  embedder?.embed(['metered-search start-up probe']).then(
    () => log.info('the embedding model answered a start-up probe'),
    (error: unknown) =>
      log.warn({ err: error }, 'the embedding model failed a start-up probe: until it answers, semantic queries are a 503 and hybrid ones lexical'),
  );
}

/**
 * What every instance does beside requests: expiring grants and granting refills, delivering
 * webhooks (to WEBHOOK_URL's endpoint too, set here), purging expired idempotency keys.
 */
async function startUpkeep(store: Store, services: Services, config: Config, log: FastifyBaseLogger): Promise<{ stop(): Promise<void> }> {
  const billing = new BillingUpkeep(store.ledger, services.clock, ({ expired, refilled }) => {
    services.metrics?.expire(expired.reduce((sum, expiry) => sum + expiry.amount, 0));
    services.metrics?.grant(refilled.reduce((sum, refill) => sum + refill.credits, 0));
  });
  if (config.webhook) {
    await store.webhooks.putEndpoint({ id: ENV_WEBHOOK_ID, ...config.webhook, events: null, createdAt: new Date().toISOString() });
  }
  const sender = new WebhookSender(store.webhooks, services.clock, { timeoutMs: WEBHOOK_TIMEOUT_MS, allowLinkLocal: config.webhookAllowLinkLocal });
  const purge = () => services.idempotency.purgeExpired();
  void purge().catch((error: unknown) => log.warn({ err: error }, 'could not purge expired idempotency keys'));
  const tasks = [
    every(
      UPKEEP_INTERVAL_MS,
      () => billing.runOnce(),
      (error) => log.warn({ err: error }, 'could not expire grants or refill: retrying'),
    ),
    every(
      UPKEEP_INTERVAL_MS,
      () => sender.runOnce(),
      (error) => log.warn({ err: error }, 'could not deliver webhooks: retrying'),
    ),
    every(IDEMPOTENCY_PURGE_MS, purge, (error) => log.warn({ err: error }, 'could not purge expired idempotency keys')),
  ];
  return { stop: async () => void (await Promise.all(tasks.map((task) => task.stop()))) };
}

/** Closes an app, closing its idle keep-alive connections as they become idle. */
async function closeDraining(app: FastifyInstance): Promise<void> {
  // Node closes idle keep-alive connections once, when closing starts; connections busy then
  // would otherwise idle until their keep-alive timeout after their last response.
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  await app.close().finally(() => clearInterval(sweep));
}

function urlOf(app: FastifyInstance, scheme: string, host: string): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return `${scheme}://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
}
