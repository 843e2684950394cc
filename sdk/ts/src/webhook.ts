import { createHmac, timingSafeEqual } from "node:crypto";

import { Webhook } from "standardwebhooks";

/** The Stripe-style signature header: `t=<unix>,v1=<hex>[,v1=<hex>]`. */
export const SIGNATURE_HEADER = "X-Service-Signature";

/** The Standard Webhooks headers (standardwebhooks.com) beside it. */
export const STANDARD_ID_HEADER = "webhook-id";
export const STANDARD_TIMESTAMP_HEADER = "webhook-timestamp";
export const STANDARD_SIGNATURE_HEADER = "webhook-signature";

/** How far a signature's time may be from now: 300 seconds, exclusive. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Why a delivery was refused; the same cases as the Go SDK's errors
 * (ErrNoSignature, ErrTooOld, ErrNoMatch, ErrNoStandardSignature,
 * ErrSecretShape).
 */
export type WebhookFailure = "NO_SIGNATURE" | "TOO_OLD" | "NO_MATCH" | "NO_STANDARD_SIGNATURE" | "SECRET_SHAPE";

const messages: Record<WebhookFailure, string> = {
  NO_SIGNATURE: `no or malformed ${SIGNATURE_HEADER} header`,
  TOO_OLD: "signature time outside the tolerance",
  NO_MATCH: "no v1 signature matches a secret",
  NO_STANDARD_SIGNATURE: "no or malformed webhook-id, webhook-timestamp or webhook-signature header",
  SECRET_SHAPE: "the secret is not whsec_ + base64; rotate it for Standard Webhooks",
};

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";

  constructor(readonly reason: WebhookFailure) {
    super(`pmapi webhook: ${messages[reason]}`);
  }
}

/** Request headers: fetch's Headers or Node's IncomingHttpHeaders. */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** Seconds a signature's time may be from now; 300 when left out. */
  toleranceSeconds?: number;
  /** The clock, for tests. */
  now?: () => Date;
}

/**
 * Checks a delivery by its X-Service-Signature: body is the raw request body,
 * secrets the subscription's (`whsec_...`; during a rotation the new and the
 * old one). It returns when the time is within the tolerance and a v1 is the
 * HMAC-SHA256 of `<t>.<body>` keyed with a whole secret string; it throws a
 * WebhookVerificationError otherwise. Secrets of every shape work.
 */
export function verifyWebhook(body: string | Uint8Array, headers: HeaderSource, secrets: string | readonly string[],
  options: VerifyOptions = {}): void {
  const { t, sigs } = parseSignature(header(headers, SIGNATURE_HEADER));
  checkTime(t, options);
  for (const secret of list(secrets)) {
    const want = createHmac("sha256", secret).update(`${t}.`).update(body).digest();
    if (sigs.some((s) => s.length === want.length && timingSafeEqual(s, want))) {
      return;
    }
  }
  throw new WebhookVerificationError("NO_MATCH");
}

/**
 * Checks a delivery by its Standard Webhooks headers instead: a
 * `v1,<base64>` of webhook-signature must be the HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` keyed with the bytes after whsec_,
 * computed by the standardwebhooks package. A secret of the older shape
 * (whsec_ + letters and digits) throws SECRET_SHAPE: rotate it.
 */
export function verifyStandardWebhook(body: string | Uint8Array, headers: HeaderSource,
  secrets: string | readonly string[], options: VerifyOptions = {}): void {
  const id = header(headers, STANDARD_ID_HEADER);
  const ts = header(headers, STANDARD_TIMESTAMP_HEADER);
  const sig = header(headers, STANDARD_SIGNATURE_HEADER);
  if (!id || !sig || !/^[+-]?\d+$/.test(ts)) {
    throw new WebhookVerificationError("NO_STANDARD_SIGNATURE");
  }
  const t = Number(ts);
  checkTime(t, options);
  const sigs = sig.split(/\s+/).flatMap((s) => {
    const b = s.startsWith("v1,") ? base64(s.slice(3)) : undefined;
    return b ? [b] : [];
  });
  // The package's verify() is not called: its tolerance is fixed, inclusive
  // and read from the clock, where pmapi's rule (both schemes, both SDKs) is
  // exclusive and configurable, and it takes one secret where a rotation has two.
  const payload = typeof body === "string" ? body : Buffer.from(body);
  for (const secret of list(secrets)) {
    if (!secret.startsWith("whsec_") || base64(secret.slice("whsec_".length)) === undefined) {
      throw new WebhookVerificationError("SECRET_SHAPE");
    }
    const want = base64(new Webhook(secret).sign(id, new Date(t * 1000), payload).slice(3));
    if (want && sigs.some((s) => s.length === want.length && timingSafeEqual(s, want))) {
      return;
    }
  }
  throw new WebhookVerificationError("NO_MATCH");
}

function list(secrets: string | readonly string[]): readonly string[] {
  return typeof secrets === "string" ? [secrets] : secrets;
}

function header(headers: HeaderSource, name: string): string {
  if (headers instanceof Headers) {
    return headers.get(name) ?? "";
  }
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === lower && v !== undefined) {
      return typeof v === "string" ? v : (v[0] ?? "");
    }
  }
  return "";
}

function checkTime(t: number, options: VerifyOptions): void {
  const tolerance = (options.toleranceSeconds ?? 0) > 0 ? options.toleranceSeconds! : DEFAULT_TOLERANCE_SECONDS;
  const now = (options.now?.() ?? new Date()).getTime();
  const d = now - t * 1000;
  if (!(d < tolerance * 1000 && d > -tolerance * 1000)) {
    throw new WebhookVerificationError("TOO_OLD");
  }
}

// parseSignature reads t and every well-formed v1; other schemes' values are
// skipped, as Stripe's verifiers do.
function parseSignature(h: string): { t: number; sigs: Buffer[] } {
  let t = -1;
  const sigs: Buffer[] = [];
  for (const part of h.split(",")) {
    const eq = part.trim().indexOf("=");
    if (eq < 0) {
      throw new WebhookVerificationError("NO_SIGNATURE");
    }
    const k = part.trim().slice(0, eq);
    const v = part.trim().slice(eq + 1);
    if (k === "t") {
      if (!/^[+-]?\d+$/.test(v)) {
        throw new WebhookVerificationError("NO_SIGNATURE");
      }
      t = Number(v);
    } else if (k === "v1" && /^([0-9a-fA-F]{2})+$/.test(v)) {
      sigs.push(Buffer.from(v, "hex"));
    }
  }
  if (t < 0 || sigs.length === 0) {
    throw new WebhookVerificationError("NO_SIGNATURE");
  }
  return { t, sigs };
}

// base64 decodes standard, padded base64 strictly (Buffer's decoder skips
// what it does not know), or gives undefined.
function base64(s: string): Buffer | undefined {
  if (s.length === 0 || s.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) {
    return undefined;
  }
  const b = Buffer.from(s, "base64");
  return b.toString("base64") === s ? b : undefined;
}
