/** Face search as the service sees it, whatever answers it: the downstream client (face-client.ts) or the embedded engine (embedded.ts). */

export interface FaceMatch {
  [field: string]: unknown;
}

export type FaceSearchOutcome =
  | { kind: 'matches'; matches: FaceMatch[] }
  | { kind: 'rejected'; status: number; message: string }
  | { kind: 'failed'; message: string };

/** Whether a face search may start now; checked before the debit, so a refusal costs nothing. */
export type FaceAdmission = { admitted: true } | { admitted: false; message: string; retryAfterSeconds: number };

/** Whatever answers face searches: the HTTP client (face-client.ts), or the embedded engine (embedded.ts). */
export interface FaceSearchBackend {
  /** Refuses while no search can be served (breaker open, queue full); admitted, one search may follow. */
  admit(): FaceAdmission;
  /** Gives back an admission whose search never ran (the request was refused after admission). */
  release(): void;
  search(body: Record<string, unknown>): Promise<FaceSearchOutcome>;
  /** The embedded engine's searches admitted and not finished (running or queued); a downstream service counts its own. */
  readonly pending?: number;
  /** Resolves once searches can be served (the embedded engine's models loaded and warm). */
  readonly ready?: Promise<void>;
  /** Latency in ms of reaching the service without sending it an image; null if it does not answer. */
  ping(): Promise<number | null>;
  close(): Promise<void>;
}
