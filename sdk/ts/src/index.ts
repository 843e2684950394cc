// The TypeScript client of the pmapi public API (docs/sdk.md). The types are
// generated from the served document by openapi-typescript (schema.gen.ts,
// make sdk); the rest is the thin layer the generated client lacks.
export type * from "./schema.gen.js";
export {
  apiKey,
  bearer,
  createPmapiClient,
  type Credential,
  type PmapiClient,
  type PmapiClientOptions,
} from "./client.js";
export { etag, notModified, preconditionFailed, revalidate, type Revalidated } from "./conditional.js";
export { PmapiError, unwrap, type FetchResult, type Payload, type PmapiErrorCode } from "./errors.js";
export { idempotencyKey, replayed } from "./idempotency.js";
export { items, pages, type Page } from "./pages.js";
export {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  verifyStandardWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type HeaderSource,
  type VerifyOptions,
  type WebhookFailure,
} from "./webhook.js";
