/** An answer other than 2xx: `status` and `message` from the service's error envelope. */
export class MeteredSearchError extends Error {
  override readonly name = 'MeteredSearchError';

  constructor(
    /** The HTTP status (equal to the envelope's status). */
    readonly status: number,
    message: string,
    /** The whole envelope, with any extra fields (such as /credits' current_balance). */
    readonly body: Record<string, unknown>,
    /** The service's x-request-id: quote it when reporting a problem. */
    readonly requestId: string | undefined,
    /** How many attempts were made before giving up. */
    readonly attempts: number,
    /** When the service said to try again (Retry-After): a spend cap's reset, say. */
    readonly retryAt?: Date,
  ) {
    super(message);
  }
}

/** The service could not be reached (or did not answer in time) on any attempt. */
export class MeteredSearchNetworkError extends Error {
  override readonly name = 'MeteredSearchNetworkError';

  constructor(
    message: string,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}
