import type { Config } from '../../config.js';
import { startServer } from '../../server.js';

export async function serve(config: Config): Promise<{ url: string }> {
  const server = await startServer(config, { handleSignals: true });
  return { url: server.url };
}
