/**
 * What every workspace tool shares: the workspace from the tool context, errors turned into tool
 * results the model can read (the workspace throws `AppError`s whose messages say what to do), the
 * output cap (`workspace_tool_output_bytes`), and text/binary decisions.
 */
import { AppError } from "../../../kernel/errors.ts";
import { fail, type ToolContext, type ToolResult } from "../../tools/spec.ts";
import type { SessionWorkspace } from "../session-workspace.ts";

/** Runs `fn` with the run's workspace; a workspace error becomes an error result with its code. */
export async function withWorkspace(ctx: ToolContext, fn: (ws: SessionWorkspace) => Promise<ToolResult>): Promise<ToolResult> {
  const ws = ctx.workspace;
  if (!ws) return fail("no_workspace", "This session has no file workspace");
  try {
    return await fn(ws);
  } catch (err) {
    if (err instanceof AppError && err.code !== "internal") return fail(err.code, err.message);
    throw err;
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const utf8 = (text: string): Uint8Array => encoder.encode(text);
export const text = (bytes: Uint8Array): string => decoder.decode(bytes);

/** Binary like git decides it: a NUL byte in the first 8000 bytes. */
export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.byteLength, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/** Collects output lines until `maxBytes`; `full` says a line was refused. */
export class CappedLines {
  readonly lines: string[] = [];
  #bytes = 0;
  full = false;

  constructor(readonly maxBytes: number) {}

  push(line: string): boolean {
    const size = encoder.encode(line).byteLength + 1;
    if (this.#bytes + size > this.maxBytes) {
      this.full = true;
      return false;
    }
    this.#bytes += size;
    this.lines.push(line);
    return true;
  }
}

/** `text` cut to `maxBytes` UTF-8 bytes (on a character boundary) with a note saying how much was cut. */
export function capText(value: string, maxBytes: number, what: string): string {
  const bytes = encoder.encode(value);
  if (bytes.byteLength <= maxBytes) return value;
  const cut = decoder.decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD$/, "");
  return `${cut}\n[${what} truncated: ${bytes.byteLength - maxBytes} more bytes]`;
}

/** One line of output, cut to `max` characters. */
export function clip(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max)}… [${line.length - max} more characters]` : line;
}
