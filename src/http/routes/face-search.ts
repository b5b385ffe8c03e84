import type { FastifyInstance, FastifyRequest } from 'fastify';
import { priceOf } from '../../billing/ledger-rules.js';
import { ApiError } from '../../errors.js';
import type { FaceMatch } from '../../faces/face-search.js';
import { ACCEPTED_IMAGE_FORMATS, imageFormatOfBase64, normaliseBase64 } from '../../faces/image.js';
import { ProbeFetchError } from '../../faces/probe-fetch.js';
import type { AppSettings, Services } from '../../services/services.js';
import { noCredits, purchaseUrlFor } from '../keyed/refusals.js';
import {
  billableErrorResponses,
  billableHeaders,
  chargedResponse,
  errorResponse,
  keyedErrorResponses,
  security,
  successHeaders,
} from '../schemas/common.js';
import type { RouteHooks } from '../steps.js';

/** Where the image may be sent, in order of precedence (docs/api.md). */
const BASE64_FIELDS = ['image_b64', 'image_base64', 'probe_image_b64'] as const;
const URL_FIELD = 'probe_image_url';
const IMAGE_FIELDS = [...BASE64_FIELDS, URL_FIELD];

const limited503 = {
  ...keyedErrorResponses[503],
  description: 'No face service is available now: none configured, the breaker open, the queue full, or the data store down (not charged).',
};

const imageField = (description: string) => ({ type: 'string', description }) as const;

const schema = {
  summary: 'Face search through the biometric service (1 credit)',
  description:
    'Forwards the whole body (extra and nested keys included) to the face service with the image under image_b64. ' +
    'One of image_b64, image_base64, probe_image_b64 or probe_image_url is required.',
  operationId: 'postFaceSearch',
  tags: ['billable'],
  security,
  headers: billableHeaders,
  body: {
    type: 'object',
    properties: {
      image_b64: imageField('Base64 image (standard or URL-safe alphabet, padding optional).'),
      image_base64: imageField('Alias of image_b64.'),
      probe_image_b64: imageField('Alias of image_b64.'),
      probe_image_url: imageField('HTTPS URL of the image, fetched by the service before the debit; only public addresses are fetched.'),
      top_k: { type: 'integer', minimum: 1, maximum: 10, description: 'At most this many matches.' },
      threshold: { type: 'number', minimum: 0, maximum: 1, description: 'Minimum confidence of a returned match.' },
    },
    additionalProperties: true,
  },
  response: {
    200: {
      description: 'The matching faces, best first.',
      headers: successHeaders('billable'),
      type: 'object',
      required: ['status', 'matches'],
      properties: {
        status: { type: 'integer' },
        matches: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              doc_id: { type: 'string' },
              confidence: { type: 'number' },
              face_file: { type: 'string' },
              attributes: { type: 'object', additionalProperties: true },
            },
            additionalProperties: true,
          },
        },
      },
    },
    ...billableErrorResponses,
    400: chargedResponse(
      'The request is invalid: the message names the field (not charged). Or the downstream face service refused the image as invalid, passed through with its message (the credit is spent: x-credits-charged says so).',
    ),
    413: errorResponse('The body is over BODY_LIMIT_BYTES, or the image (sent, or at probe_image_url) over IMAGE_MAX_BYTES (not charged).'),
    422: chargedResponse(
      'No face was found in the image, or it took longer than FACE_JOB_TIMEOUT_MS (the credit is spent), or the Idempotency-Key was used for a different request (not charged).',
    ),
    '4XX': chargedResponse('Another 4xx the downstream face service answered, passed through with its message (the credit is spent).'),
    502: chargedResponse('The face service failed, timed out or answered garbage (the credit is spent).'),
    503: limited503,
  },
} as const;

const fieldMessages = {
  '': 'The body must be a JSON object with image_b64, sent with Content-Type: application/json.',
  top_k: 'top_k must be a JSON integer from 1 to 10.',
  threshold: 'threshold must be a number from 0 to 1.',
  ...Object.fromEntries(IMAGE_FIELDS.map((field) => [field, `${field} must be a string.`])),
};

const UNSUPPORTED = `is not a ${ACCEPTED_IMAGE_FORMATS} image (judged by its first bytes): send one of those formats.`;

type ProbeImage = { kind: 'base64'; base64: string } | { kind: 'url'; url: URL };

declare module 'fastify' {
  interface FastifyRequest {
    probeImage: ProbeImage | null;
    /** Set once this request holds the face service's admission (see the circuit breaker). */
    faceAdmitted: 'admitted' | 'used' | null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The image checks that need no schema: which field, valid base64, size. All before authentication. */
function readProbeImage(body: Record<string, unknown>, imageMaxBytes: number): ProbeImage | undefined {
  const field = IMAGE_FIELDS.find((name) => body[name] !== undefined);
  if (field === undefined) throw new ApiError('MISSING_IMAGE');
  const value = body[field];
  if (typeof value !== 'string') return undefined;
  if (field === URL_FIELD) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new ApiError('BAD_REQUEST', `${URL_FIELD} is not a valid URL.`);
    }
    if (url.protocol !== 'https:') throw new ApiError('BAD_REQUEST', `${URL_FIELD} must be an https:// URL.`);
    return { kind: 'url', url };
  }
  const image = normaliseBase64(value);
  if (!image.ok) throw new ApiError('BAD_REQUEST', `${field} ${image.reason}.`);
  if (image.bytes > imageMaxBytes) {
    throw new ApiError('IMAGE_TOO_LARGE', `The image is ${image.bytes} bytes; the limit is ${imageMaxBytes} bytes (IMAGE_MAX_BYTES).`);
  }
  if (!imageFormatOfBase64(image.base64)) throw new ApiError('UNSUPPORTED_IMAGE', `${field} ${UNSUPPORTED}`);
  return { kind: 'base64', base64: image.base64 };
}

function selectMatches(matches: FaceMatch[], topK: number | undefined, threshold: number | undefined): FaceMatch[] {
  const kept = threshold === undefined ? matches : matches.filter((match) => !(typeof match.confidence === 'number' && match.confidence < threshold));
  return topK === undefined ? kept : kept.slice(0, topK);
}

/** The route's own steps, which the keyed group runs after claiming the Idempotency-Key and before the charge. */
export function faceSearchSteps(app: FastifyInstance, services: Services, settings: Pick<AppSettings, 'purchaseUrl' | 'prices'>) {
  app.decorateRequest('probeImage', null);
  app.decorateRequest('faceAdmitted', null);

  async function requireFaceService(request: FastifyRequest): Promise<void> {
    if (!services.face) {
      throw new ApiError('FACE_SERVICE_UNAVAILABLE', 'Face search is not configured on this deployment (FACE_SERVICE_URL is not set).');
    }
    const admission = services.face.admit();
    if (!admission.admitted) {
      throw new ApiError('FACE_SERVICE_UNAVAILABLE', admission.message, { headers: { 'retry-after': String(admission.retryAfterSeconds) } });
    }
    request.faceAdmitted = 'admitted';
  }

  /**
   * After authentication and before the debit (docs/api.md): a URL that cannot be used costs
   * nothing, and a key with nothing to spend makes the service fetch nothing.
   */
  async function fetchProbeImage(request: FastifyRequest): Promise<void> {
    if (request.probeImage?.kind !== 'url') return;
    const { caller } = request;
    if (caller && caller.key.balance < priceOf('/face/search', caller.key, settings.prices)) {
      throw noCredits(purchaseUrlFor(settings.purchaseUrl, caller.key.accountId));
    }
    let base64: string;
    try {
      base64 = await services.probeImages.fetch(request.probeImage.url);
    } catch (error) {
      if (!(error instanceof ProbeFetchError)) throw error;
      throw new ApiError(error.status === 413 ? 'IMAGE_TOO_LARGE' : 'BAD_REQUEST', `${error.message} You were not charged.`);
    }
    if (!imageFormatOfBase64(base64)) throw new ApiError('UNSUPPORTED_IMAGE', `The file at ${URL_FIELD} ${UNSUPPORTED} You were not charged.`);
    request.probeImage = { kind: 'base64', base64 };
  }

  return { requireFaceService, fetchProbeImage };
}

export function faceSearchRoute(app: FastifyInstance, services: Services, settings: AppSettings, hooks: RouteHooks): void {
  app.post(
    '/face/search',
    {
      schema,
      config: { fieldMessages },
      preValidation: async (request) => {
        if (isObject(request.body)) request.probeImage = readProbeImage(request.body, settings.imageMaxBytes) ?? null;
      },
      preHandler: hooks.preHandler,
      onSend: hooks.onSend,
      onResponse: [
        (request, _reply, done) => {
          // Admitted but never sent downstream (no credits, say): give the breaker's probe slot back.
          if (request.faceAdmitted === 'admitted') services.face?.release();
          done();
        },
        ...(hooks.onResponse ? [hooks.onResponse] : []),
      ],
    },
    async (request) => {
      const body = request.body as Record<string, unknown>;
      const forwarded: Record<string, unknown> = { ...body };
      for (const field of IMAGE_FIELDS) delete forwarded[field];
      forwarded.image_b64 = (request.probeImage as { base64: string }).base64;
      request.faceAdmitted = 'used';
      const started = performance.now();
      const outcome = await services.face!.search(forwarded);
      services.metrics?.faceSearch(outcome.kind, (performance.now() - started) / 1000);
      if (outcome.kind === 'failed') throw new ApiError('UPSTREAM_FAILURE', outcome.message);
      if (outcome.kind === 'rejected') throw new ApiError('BAD_REQUEST', outcome.message, { status: outcome.status });
      const matches = selectMatches(outcome.matches, body.top_k as number | undefined, body.threshold as number | undefined);
      return { status: 200, matches };
    },
  );
}
