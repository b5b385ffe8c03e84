import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/services.js';
import { freeErrorResponses, noSecurity, successHeaders } from '../schemas/common.js';

const latency = { type: ['number', 'null'], description: 'Milliseconds, or null when not configured or not answering.' } as const;

const schema = {
  summary: 'Connectivity test',
  description: 'Measures each configured dependency. The face service is reached without sending it an image.',
  operationId: 'getNettest',
  tags: ['free'],
  security: noSecurity,
  response: {
    200: {
      description: "Each dependency's latency; ok says whether every configured one answered.",
      headers: successHeaders('free'),
      type: 'object',
      required: ['status', 'ok', 'latency_ms'],
      properties: {
        status: { type: 'integer' },
        ok: { type: 'boolean', description: 'Every configured dependency answered.' },
        latency_ms: {
          type: 'object',
          required: ['database', 'face_service'],
          properties: { database: latency, face_service: latency },
        },
      },
    },
    ...freeErrorResponses,
  },
} as const;

async function measure(probe: () => Promise<number | null>): Promise<number | null> {
  try {
    const ms = await probe();
    return ms === null ? null : Math.round(ms * 1000) / 1000;
  } catch {
    return null;
  }
}

export function nettestRoute(app: FastifyInstance, services: Services): void {
  app.get('/nettest', { schema }, async () => {
    const [database, faceService] = await Promise.all([
      measure(() => services.store.ping()),
      services.face ? measure(() => services.face!.ping()) : Promise.resolve(null),
    ]);
    const ok = database !== null && (services.face === undefined || faceService !== null);
    return { status: 200, ok, latency_ms: { database, face_service: faceService } };
  });
}
