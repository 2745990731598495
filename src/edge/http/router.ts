/**
 * Building blocks for route modules: a router whose validation failures become our JSON errors,
 * and small helpers for declaring JSON bodies and error responses in the OpenAPI document.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { ZodType } from "zod";
import type { AppEnv } from "./context.ts";
import { validationError } from "../../kernel/errors.ts";

const WHERE: Record<string, string> = { json: "body", query: "query", param: "path parameter", header: "header" };

/** A sub-router for one resource; mount it with `app.route(prefix, router)`. */
export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, WHERE[result.target] ?? result.target);
    },
  });
}

/** A required JSON request body: wrong content type → 415, bad JSON → 400, schema errors → 400 with paths. */
export function jsonBody<T extends ZodType>(schema: T, description?: string) {
  return {
    required: true as const,
    description,
    content: { "application/json": { schema } },
  };
}

export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi("Error");

const errorContent = { "application/json": { schema: ErrorSchema } };

/** OpenAPI response entries for the usual error statuses of an authenticated route. */
export function errorResponses(...statuses: (400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 502 | 503)[]) {
  const text: Record<number, string> = {
    400: "Malformed or invalid request",
    401: "Missing or invalid token",
    403: "Insufficient scope",
    404: "Not found (or in another workspace)",
    409: "Conflict with the current state",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Semantically invalid request",
    429: "Rate limited (with Retry-After) or a workspace quota reached (quota_exceeded)",
    502: "Upstream provider failed",
    503: "Upstream unavailable",
  };
  const out: Record<number, { description: string; content: typeof errorContent }> = {};
  for (const s of [400, 401, 403, ...statuses]) out[s] = { description: text[s] ?? "Error", content: errorContent };
  return out;
}

/** A JSON response entry for the OpenAPI document. */
export function jsonResponse<T extends ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}
