/**
 * Typed application errors and their one mapping to HTTP.
 * Domain code throws `AppError` with a code from `ErrorCode`; `statusOf` is the only place that
 * knows HTTP statuses, and `errorResponse` renders `{ error: { code, message, details? } }`.
 */
import { HTTPException } from "hono/http-exception";
import type { Context } from "hono";
import type { ZodError } from "zod";
import { hadMalformedJson } from "../edge/http/json-body.ts";

export type ErrorCode =
  | "bad_request"
  | "malformed_json"
  | "validation_failed"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "session_closed"
  | "busy"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unprocessable"
  | "no_model_configured"
  | "provider_error"
  | "upstream_unavailable"
  | "server_misconfigured"
  | "internal";

export function statusOf(code: ErrorCode): 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 500 | 502 | 503 {
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
    case "session_closed":
    case "busy":
      return 409;
    case "payload_too_large":
      return 413;
    case "unsupported_media_type":
      return 415;
    case "unprocessable":
    case "no_model_configured":
      return 422;
    case "provider_error":
      return 502;
    case "upstream_unavailable":
      return 503;
    case "server_misconfigured":
    case "internal":
      return 500;
  }
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: unknown;
  /** Seconds for a `Retry-After` header (busy locks, rate limits). */
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, details?: unknown, retryAfter?: number) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  get status(): number {
    return statusOf(this.code);
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
  return new AppError("validation_failed", message, details);
}

export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

/** Hono `onError`: every thrown error becomes the JSON error shape; unknown errors never leak text. */
export function errorResponse(err: unknown, c: Context): Response {
  if (err instanceof AppError) {
    const headers: Record<string, string> = {};
    if (err.retryAfter !== undefined) headers["Retry-After"] = String(err.retryAfter);
    return c.json(errorBody(err.code, err.message, err.details), err.status as 400, headers);
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    const code = status === 400 && hadMalformedJson(c) ? "malformed_json" : codeForHttpStatus(status);
    return c.json(errorBody(code, err.message || "Request rejected"), status);
  }
  console.error("unhandled error", err instanceof Error ? `${err.stack}\ncause: ${String((err as { cause?: unknown }).cause)}` : String(err));
  return c.json(errorBody("internal", "Internal error"), 500);
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
    default:
      return "internal";
  }
}
