/**
 * Beaver's one error vocabulary (docs/layering.md): every layer throws `AppError` with a code from
 * `ErrorCode`; only the edge maps codes to HTTP statuses (src/edge/http/errors.ts). The wire shape
 * `{ error: { code, message, details? } }` is built here so Durable Objects and routes agree on it.
 */
import type { ZodError } from "zod";

export type ErrorCode =
  | "bad_request"
  | "malformed_json"
  | "validation_failed"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  /** A draft needs an evaluation verdict (or an explicit, reasoned skip) before it can be approved (docs/learning.md). */
  | "evaluation_required"
  | "session_closed"
  /** The session is stopping or stopped: it takes no new messages (docs/sessions.md, "Stop, close and retry"). */
  | "session_stopping"
  | "busy"
  | "payload_too_large"
  | "quota_exceeded"
  | "rate_limited"
  | "unsupported_media_type"
  | "unprocessable"
  | "idempotency_key_reused"
  | "egress_refused"
  | "no_model_configured"
  | "provider_error"
  | "upstream_unavailable"
  | "server_misconfigured"
  | "internal";

export interface AppErrorOptions {
  /** Machine-readable context for the client (field paths, ids, limits). */
  details?: unknown;
  /** Seconds the client should wait before trying again (busy locks, rate limits). */
  retryAfter?: number;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Seconds for a `Retry-After` header (busy locks, rate limits). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }
}

export const notFound = (what: string): AppError => new AppError("not_found", `${what} not found`);

export interface IssueDetail {
  path: string;
  message: string;
}

/** Flatten zod issues into `{ path, message }` with dotted paths, naming unknown keys explicitly. */
export function zodIssues(error: ZodError): IssueDetail[] {
  const out: IssueDetail[] = [];
  for (const issue of error.issues) {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push({ path: [...base, key].join("."), message: `Unsupported key: ${[...base, key].join(".")}` });
      }
    } else {
      out.push({ path: base.join(".") || "(root)", message: issue.message });
    }
  }
  return out;
}

export function validationError(error: ZodError, where = "body"): AppError {
  const details = zodIssues(error);
  const first = details[0];
  const message = first ? `Invalid ${where}: ${first.path}: ${first.message}` : `Invalid ${where}`;
  return new AppError("validation_failed", message, { details });
}

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}
