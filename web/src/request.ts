/** An answer other than 2xx: the service's own message, shown as it came. */
export class ServiceFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends one request from the page: resolves to the body (parsed when it is JSON, else its text), or
 * rejects with a ServiceFailure holding the service's message (`unreachable` when nothing answered).
 */
export async function send<T>(path: string, init: RequestInit, unreachable: string): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ServiceFailure(0, unreachable);
  }
  const text = await response.text();
  if (!response.ok) throw new ServiceFailure(response.status, messageOf(text) ?? `The service answered ${response.status}.`);
  return (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T;
}

/** The message of an error envelope, when the body is one. */
function messageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    return typeof body.message === 'string' ? body.message : undefined;
  } catch {
    return undefined;
  }
}
