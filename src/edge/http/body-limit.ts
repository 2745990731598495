/**
 * Request body limits by route: small JSON everywhere, larger for archive uploads. Oversize bodies
 * answer 413 before any handler reads them (Content-Length or streamed count, via hono/body-limit).
 */
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context.ts";
import { AppError } from "../../kernel/errors.ts";

export const JSON_BODY_LIMIT = 1024 * 1024;
export const UPLOAD_BODY_LIMIT = 32 * 1024 * 1024;

/** Paths that accept archives (tar.gz / zip) and so get the larger limit. */
const UPLOAD_PATHS = [/^\/api\/plugins\/packages$/, /^\/api\/skills(\/[^/]+)?(\/upload)?$/];

export function limitFor(path: string): number {
  return UPLOAD_PATHS.some((re) => re.test(path)) ? UPLOAD_BODY_LIMIT : JSON_BODY_LIMIT;
}

export const bodyLimits = createMiddleware<AppEnv>(async (c, next) => {
  const maxSize = limitFor(c.req.path);
  const limiter = bodyLimit({
    maxSize,
    onError: () => {
      throw new AppError("payload_too_large", `Request body exceeds ${maxSize} bytes`, { details: { limit_bytes: maxSize } });
    },
  });
  return limiter(c, next);
});
