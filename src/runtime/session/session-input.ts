/**
 * Checks on what a caller hands a session before it is sent (shared by `SessionClient` and the routes
 * that check early): the session id's shape, the message size limit, and the fingerprint an
 * `Idempotency-Key` is bound to.
 */
import type { SubmitRunInput } from "./contract.ts";
import { AppError } from "../../kernel/errors.ts";
import { DEFAULT_LIMITS } from "../../storage/limits.ts";
import { sha256Hex } from "../../kernel/hash.ts";

/** Session ids: letters, digits and `_ - . :` (so `task:<id>` works), 1–128 characters. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Default longest message a run accepts, in UTF-8 bytes (a larger one answers 413; BEAVER_LIMITS.message_bytes overrides). */
export const MAX_MESSAGE_BYTES = DEFAULT_LIMITS.message_bytes;

/**
 * 413 when a message is over `limitBytes` (the operator's `message_bytes`, storage/limits.ts; the
 * default when the caller has no environment at hand). `field` names the body field the client sent.
 */
export function assertMessageSize(content: string, limitBytes: number = MAX_MESSAGE_BYTES, field = "content"): void {
  const bytes = new TextEncoder().encode(content).byteLength;
  if (bytes > limitBytes) {
    throw new AppError("payload_too_large", `Message content is ${bytes} bytes; the limit is ${limitBytes}`, {
      details: { field, limit_bytes: limitBytes },
    });
  }
}

/**
 * The fingerprint an `Idempotency-Key` is bound to (`SubmitRunInput.idempotency_fingerprint`): a hash
 * of what a client's message says — content, source and client id, in a fixed order — and not of how
 * it asked to be answered (`?wait`, `Accept`), so the same message repeated any way is the same request.
 */
export async function messageFingerprint(message: Pick<SubmitRunInput, "content" | "source" | "client_id">): Promise<string> {
  const canonical = JSON.stringify(["message/v1", message.content, message.source ?? null, message.client_id ?? null]);
  return `sha256:${await sha256Hex(canonical)}`;
}
