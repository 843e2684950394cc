import type { ErrorCode } from "./schema.gen.js";

/**
 * The code of a PmapiError: the envelope's, or UNEXPECTED_RESPONSE for a
 * failure without one (a proxy's error page, or a 304 with no body:
 * read a conditional GET with revalidate).
 */
export type PmapiErrorCode = ErrorCode | "UNEXPECTED_RESPONSE";

/** A failure answer of the API, from its error envelope. */
export class PmapiError extends Error {
  override readonly name = "PmapiError";

  constructor(
    /** The HTTP status. */
    readonly status: number,
    readonly code: PmapiErrorCode,
    message: string,
    /** Structured context, such as the offending field. */
    readonly details: Readonly<Record<string, unknown>>,
    /** The request's id (X-Request-Id), to quote to the operator. */
    readonly requestId: string,
  ) {
    super(message);
  }

  /** The error an answer carries; body is its parsed JSON, if any. */
  static from(response: Response, body: unknown): PmapiError {
    const requestId = response.headers.get("X-Request-Id") ?? "";
    const e = isEnvelope(body) ? body.error : undefined;
    if (e === undefined) {
      return new PmapiError(response.status, "UNEXPECTED_RESPONSE",
        `${response.status} ${response.statusText} without an error envelope`, {}, requestId);
    }
    return new PmapiError(response.status, e.code, e.message, e.details ?? {}, e.requestId || requestId);
  }
}

interface Envelope {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown>; requestId: string };
}

function isEnvelope(body: unknown): body is Envelope {
  if (typeof body !== "object" || body === null || !("error" in body)) {
    return false;
  }
  const e = (body as { error: unknown }).error;
  return typeof e === "object" && e !== null && typeof (e as { code?: unknown }).code === "string";
}

/** What a success body unwraps to: an envelope's data, any other body itself. */
export type Payload<T> = T extends { success: boolean; data: infer D } ? D : T;

/** The result of an openapi-fetch call. */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a success answer (its envelope unwrapped); a failure throws a
 * PmapiError. Network failures reject as fetch's do.
 */
export async function unwrap<T>(result: FetchResult<T> | Promise<FetchResult<T>>): Promise<Payload<T>> {
  const { data, error, response } = await result;
  if (!response.ok || error !== undefined) {
    throw PmapiError.from(response, error);
  }
  if (typeof data === "object" && data !== null && "success" in data && "data" in data) {
    return (data as { data: unknown }).data as Payload<T>;
  }
  return data as Payload<T>;
}
