/**
 * A fresh Idempotency-Key. Send the same key again when retrying a POST whose
 * answer was lost: the server replays the first answer instead of doing the
 * work twice (for 24 hours; another body with the key is 422
 * IDEMPOTENCY_KEY_REUSED). Keep it with the request, not per attempt.
 */
export function idempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** Whether an answer is the replay of an earlier request with the same key. */
export function replayed(response: Response): boolean {
  return response.headers.get("Idempotent-Replayed") === "true";
}
