import { PmapiError, unwrap, type FetchResult, type Payload } from "./errors.js";

// Conditional requests: every GET answer carries an ETag. Send it back in
// If-None-Match to poll (an unchanged answer is 304 with no body and costs no
// request of the rate limit), or in If-Match on an update to change only the
// version read (a stale one is a PmapiError PRECONDITION_FAILED, and nothing
// is changed).

/** The answer's ETag, or undefined when it has none. */
export function etag(response: Response): string | undefined {
  return response.headers.get("ETag") ?? undefined;
}

/**
 * Whether the answer is 304 Not Modified: the one whose ETag was sent in
 * If-None-Match is still current. unwrap would throw UNEXPECTED_RESPONSE for
 * it, having no body to unwrap; revalidate does not.
 */
export function notModified(response: Response): boolean {
  return response.status === 304;
}

/** The outcome of a conditional GET: the copy held is current, or the new data. */
export type Revalidated<T> =
  | { readonly notModified: true; readonly etag: string | undefined }
  | { readonly notModified: false; readonly etag: string | undefined; readonly data: Payload<T> };

/**
 * unwrap for a GET sent with If-None-Match: a 304 is `notModified`, a 200 the
 * new data with its ETag to send next time; any failure throws a PmapiError.
 */
export async function revalidate<T>(result: FetchResult<T> | Promise<FetchResult<T>>): Promise<Revalidated<T>> {
  const answer = await result;
  const tag = etag(answer.response);
  if (notModified(answer.response)) {
    return { notModified: true, etag: tag };
  }
  return { notModified: false, etag: tag, data: await unwrap(answer) };
}

/**
 * Whether e is the 412 of an update whose If-Match named a version that is
 * no longer current: read the resource again, and decide again.
 */
export function preconditionFailed(e: unknown): e is PmapiError {
  return e instanceof PmapiError && e.code === "PRECONDITION_FAILED";
}
