/**
 * Errors under /v1 in OpenAI's shape, `{ error: { message, type, code, param } }`, because OpenAI
 * clients parse that one (docs/openai-api.md, "Errors"). The status, `Retry-After` and message are
 * Beaver's own (src/edge/http/errors.ts decides them); `code` is Beaver's error code, `type` OpenAI's
 * class for the status, and `param` the offending field when Beaver knows it. Everything outside /v1
 * keeps Beaver's shape.
 */
import type { Context } from "hono";
import { errorResponse } from "../errors.ts";

export function isOpenAiPath(path: string): boolean {
  return path === "/v1" || path.startsWith("/v1/");
}

export function openAiErrorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

interface BeaverError {
  error: { code: string; message: string; details?: unknown };
}

/** The field an error is about: `details.param`, a 413's `details.field`, or the first validation path. */
export function paramOf(details: unknown): string | null {
  if (Array.isArray(details)) {
    const path = (details[0] as { path?: unknown } | undefined)?.path;
    return typeof path === "string" && path !== "(root)" ? path : null;
  }
  if (details !== null && typeof details === "object") {
    const d = details as { param?: unknown; field?: unknown };
    if (typeof d.param === "string") return d.param;
    if (typeof d.field === "string") return d.field;
  }
  return null;
}

/** Rewrites a Beaver error answer into OpenAI's shape, keeping its status and headers. */
export async function toOpenAiError(res: Response): Promise<Response> {
  const body = (await res.json()) as BeaverError;
  const headers = new Headers(res.headers);
  headers.delete("Content-Length");
  const error = {
    message: body.error.message,
    type: openAiErrorType(res.status),
    code: body.error.code,
    param: paramOf(body.error.details),
  };
  return Response.json({ error }, { status: res.status, headers });
}

/** Hono `onError` for the whole app: Beaver's shape everywhere, OpenAI's under /v1. */
export async function errorResponseFor(err: unknown, c: Context): Promise<Response> {
  const res = errorResponse(err, c);
  return isOpenAiPath(c.req.path) ? toOpenAiError(res) : res;
}
