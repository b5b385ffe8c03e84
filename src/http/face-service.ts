import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { envelope } from '../errors.js';
import { ACCEPTED_IMAGE_FORMATS, imageFormatOfBase64, normaliseBase64 } from '../faces/image.js';
import { embeddedFaceSearch } from '../services/build.js';
import { openStore } from '../store/open.js';

/**
 * The embedded engine behind the downstream contract that FACE_SERVICE_URL expects, so it can run
 * on machines of its own: POST JSON with image_b64 (and top_k, threshold) -> {"matches": [...]};
 * errors as {status, message}. HEAD and GET / answer at once (the proxy's ping).
 */
export async function startFaceService(config: Config): Promise<{ app: FastifyInstance; url: string; close: () => Promise<void> }> {
  const store = await openStore(config, { longRunning: true });
  const search = embeddedFaceSearch(config, store.faces, Math.max(1, config.faceWorkers));
  await search.ready;
  const app = Fastify({ logger: false, bodyLimit: config.bodyLimitBytes });
  app.get('/', async () => envelope(200, 'metered-search face service'));
  app.post('/*', async (request, reply) => {
    const body = request.body as Record<string, unknown> | null;
    const image = typeof body?.image_b64 === 'string' ? normaliseBase64(body.image_b64) : undefined;
    if (!image?.ok) return reply.code(400).send(envelope(400, 'image_b64 must be a base64 image.'));
    if (image.bytes > config.imageMaxBytes) return reply.code(413).send(envelope(413, `The image is larger than ${config.imageMaxBytes} bytes.`));
    if (!imageFormatOfBase64(image.base64)) return reply.code(400).send(envelope(400, `image_b64 is not a ${ACCEPTED_IMAGE_FORMATS} image.`));
    const admission = search.admit();
    if (!admission.admitted) {
      return reply.code(503).header('retry-after', String(admission.retryAfterSeconds)).send(envelope(503, admission.message));
    }
    const outcome = await search.search({ ...body, image_b64: image.base64 });
    if (outcome.kind === 'matches') return { matches: outcome.matches };
    const status = outcome.kind === 'rejected' ? outcome.status : 500;
    return reply.code(status).send(envelope(status, outcome.message));
  });
  const address = await app.listen({ port: config.port, host: config.host });
  return {
    app,
    url: address,
    close: async () => {
      await app.close();
      await search.close();
      await store.close();
    },
  };
}
