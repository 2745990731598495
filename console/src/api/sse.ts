/**
 * Reads a Server-Sent Events response with `fetch`, so the bearer token goes out as a header
 * (`EventSource` cannot send one; routes without a stream ticket, like the draft evaluation's
 * progress stream in docs/evaluation.md, need this). Frames are `event:` / `data:` / `id:` lines
 * ended by a blank line; each frame's data is handed over as parsed JSON.
 */
import { authHeaders, readResponse } from "./client";

export interface SseFrame {
  event: string;
  id: string | null;
  data: unknown;
}

/** Calls `onFrame` for every frame of the stream at `url` until it ends or `signal` aborts. */
export async function readSse(url: string, onFrame: (frame: SseFrame) => void, signal: AbortSignal): Promise<void> {
  const res = await fetch(url, { headers: { ...authHeaders(), Accept: "text/event-stream" }, signal });
  if (!res.ok || !res.body) {
    await readResponse(res);
    return;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer[end] === "\r" ? 4 : 2));
      const frame = parseFrame(block);
      if (frame) onFrame(frame);
    }
  }
}

function parseFrame(block: string): SseFrame | null {
  let event = "message";
  let id: string | null = null;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(":")) continue; // a comment (keep-alive)
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  const text = data.join("\n");
  try {
    return { event, id, data: JSON.parse(text) };
  } catch {
    return { event, id, data: text };
  }
}
