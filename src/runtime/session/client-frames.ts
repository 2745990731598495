/**
 * What a client may send on the session WebSocket (docs/sessions.md, "Two-way live channel"): a
 * message (optionally as a steer or a follow-up), a cancel, or a decision on a tool approval. Pure:
 * parses one frame's text into a typed frame or the error frame to answer with; the socket stays open
 * either way.
 */
import { z } from "zod";
import { zodIssues } from "../../kernel/errors.ts";

/** Room for the JSON around a message's content (type, client_id, mode, escapes aside). */
const FRAME_OVERHEAD_BYTES = 4_096;

export const ClientFrameSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("message"),
    content: z.string().min(1),
    client_id: z.string().min(1).max(100).optional(),
    /** `steer`: join the running run; `follow_up`: queue as a follow-up task; absent: an ordinary message. */
    mode: z.enum(["steer", "follow_up"]).optional(),
  }),
  z.strictObject({ type: z.literal("cancel") }),
  z.strictObject({ type: z.enum(["approve", "deny"]), approval_id: z.string().min(1).max(100) }),
]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

export interface FrameError {
  code: "malformed_json" | "validation_failed" | "payload_too_large" | "unsupported_media_type";
  message: string;
  details?: unknown;
}

export type ParsedFrame = { ok: true; frame: ClientFrame } | { ok: false; error: FrameError };

/** The error frame a client gets for a frame that could not be taken. */
export function errorFrame(error: { code: string; message: string; details?: unknown }): string {
  const { code, message, details } = error;
  return JSON.stringify({ type: "error", error: { code, message, ...(details !== undefined ? { details } : {}) } });
}

/** Parses one client frame; `messageBytes` is the message size limit (BEAVER_LIMITS.message_bytes). */
export function parseClientFrame(raw: string | ArrayBuffer, messageBytes: number): ParsedFrame {
  if (typeof raw !== "string") return { ok: false, error: { code: "unsupported_media_type", message: "Frames are JSON text, not binary" } };
  const bytes = new TextEncoder().encode(raw).byteLength;
  if (bytes > messageBytes + FRAME_OVERHEAD_BYTES)
    return {
      ok: false,
      error: {
        code: "payload_too_large",
        message: `The frame is ${bytes} bytes; a message may have at most ${messageBytes} bytes of content`,
      },
    };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { ok: false, error: { code: "malformed_json", message: "The frame is not JSON" } };
  }
  const parsed = ClientFrameSchema.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      error: { code: "validation_failed", message: "The frame is not a valid client frame", details: zodIssues(parsed.error) },
    };
  const frame = parsed.data;
  if (frame.type === "message") {
    const contentBytes = new TextEncoder().encode(frame.content).byteLength;
    if (contentBytes > messageBytes)
      return {
        ok: false,
        error: { code: "payload_too_large", message: `Message content is ${contentBytes} bytes; the limit is ${messageBytes}` },
      };
  }
  return { ok: true, frame };
}
