/**
 * Reading an archive upload (skills, plugins): the content types accepted, the bytes (413 is enforced
 * earlier, body-limit.ts) and the OpenAPI body. HTTP belongs to the edge, so this lives here and the
 * skills domain gets plain bytes.
 */
import type { Context } from "hono";
import { AppError } from "../../kernel/errors.ts";

export const ARCHIVE_CONTENT_TYPES = [
  "application/gzip",
  "application/x-gzip",
  "application/x-tar",
  "application/zip",
  "application/x-zip-compressed",
  "application/octet-stream",
] as const;

export async function readArchiveBody(c: Context): Promise<Uint8Array> {
  const type = (c.req.header("Content-Type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!(ARCHIVE_CONTENT_TYPES as readonly string[]).includes(type)) {
    throw new AppError(
      "unsupported_media_type",
      `Send the archive as one of: ${ARCHIVE_CONTENT_TYPES.join(", ")} (got '${type || "none"}')`,
    );
  }
  return new Uint8Array(await c.req.arrayBuffer());
}

/** OpenAPI request body for an archive upload. */
export const archiveRequestBody = {
  required: true as const,
  description: "A tar.gz, tar or zip archive",
  content: Object.fromEntries(ARCHIVE_CONTENT_TYPES.map((t) => [t, { schema: { type: "string" as const, format: "binary" } }])),
};
