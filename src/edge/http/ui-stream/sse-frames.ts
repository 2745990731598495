/**
 * Reads the session's own SSE answer (`id:`, `event:`, `data: <frame JSON>` blocks; comments for
 * keep-alive) back into stream frames, so the edge can re-encode a run for another protocol
 * (docs/ui-stream.md). Only `data:` lines carry a frame; everything else is skipped.
 */
import type { StreamFrame } from "../../../runtime/session/events.ts";

/** Frames as they arrive on `body`, read directly (no pipe: the caller's pull drives each read). */
export function sseFrameReader(body: ReadableStream<Uint8Array>): {
  next(): Promise<StreamFrame | null>;
  cancel(reason?: unknown): Promise<void>;
} {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const queue: StreamFrame[] = [];
  let buffer = "";
  let ended = false;
  const take = (final: boolean) => {
    for (;;) {
      let idx = buffer.indexOf("\n\n");
      if (idx < 0) {
        if (!final || buffer.trim() === "") return;
        idx = buffer.length;
      }
      const frame = frameOf(buffer.slice(0, idx));
      buffer = buffer.slice(idx + 2);
      if (frame) queue.push(frame);
    }
  };
  return {
    async next() {
      while (queue.length === 0) {
        if (ended) return null;
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          buffer += decoder.decode();
          take(true);
        } else {
          buffer += decoder.decode(value, { stream: true });
          take(false);
        }
      }
      return queue.shift()!;
    },
    cancel: (reason) => reader.cancel(reason),
  };
}

function frameOf(block: string): StreamFrame | null {
  const data = block
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
    .join("\n");
  return data === "" ? null : (JSON.parse(data) as StreamFrame);
}
