/**
 * The one place that maps Beaver's error codes (src/kernel/errors.ts) to HTTP statuses, and Hono's
 * `onError`: every thrown error becomes `{ error: { code, message, details? } }`; an unknown error is
 * logged once with an id and answered as `internal`, never with its text (docs/layering.md).
 */
import { HTTPException } from "hono/http-exception";
import type { Context } from "hono";
import { AppError, errorBody, type ErrorCode } from "../../kernel/errors.ts";
import { logUnexpected } from "../../kernel/outcome.ts";
import { jsonBodyProblem } from "./json-body.ts";

export function statusOf(code: ErrorCode): 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503 {
  switch (code) {
    case "bad_request":
    case "malformed_json":
    case "validation_failed":
      return 400;
    case "unauthorized":
      return 401;
    case "forbidden":
      return 403;
    case "not_found":
      return 404;
    case "conflict":
    case "evaluation_required":
    case "session_closed":
    case "session_stopping":
    case "busy":
      return 409;
    case "payload_too_large":
      return 413;
    case "unsupported_media_type":
      return 415;
    case "unprocessable":
    case "idempotency_key_reused":
    case "egress_refused":
    case "no_model_configured":
      return 422;
    // A hard quota carries no retryAfter (waiting does not help); a rate limit does (docs/limits.md).
    case "quota_exceeded":
    case "rate_limited":
      return 429;
    case "provider_error":
      return 502;
    case "upstream_unavailable":
      return 503;
    case "server_misconfigured":
    case "internal":
      return 500;
  }
}
/** Hono `onError`: every thrown error becomes the JSON error shape; unknown errors never leak text. */
export function errorResponse(err: unknown, c: Context): Response {
  if (err instanceof AppError) {
    const headers: Record<string, string> = {};
    if (err.retryAfter !== undefined) headers["Retry-After"] = String(err.retryAfter);
    return c.json(errorBody(err.code, err.message, err.details), statusOf(err.code), headers);
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    // A validator's "Malformed JSON" 400 on a body the JSON parser refused: answer why it was refused.
    const problem = status === 400 ? jsonBodyProblem(c) : undefined;
    if (problem) return errorResponse(problem, c);
    return c.json(errorBody(codeForHttpStatus(status), err.message || "Request rejected"), status);
  }
  const wire = logUnexpected("request", err);
  return c.json(errorBody(wire.code, wire.message), 500);
}

function codeForHttpStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "rate_limited";
    default:
      return "internal";
  }
}
