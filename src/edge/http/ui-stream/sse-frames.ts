/**
 * Reads the session's own SSE answer (`id:`, `event:`, `data: <frame JSON>` blocks; comments for
 * keep-alive) back into stream frames, so the edge can re-encode a run for another protocol
 * (docs/ui-stream.md). Only `data:` lines carry a frame; everything else is skipped.
 */
import type { StreamFrame } from "../../../runtime/session/events.ts";

export class SseFrameStream extends TransformStream<Uint8Array, StreamFrame> {
  constructor() {
    const decoder = new TextDecoder();
    let buffer = "";
    const flushBlocks = (controller: TransformStreamDefaultController<StreamFrame>, final: boolean) => {
      let idx: number;
      while ((idx = buffer.indexOf("\n\n")) >= 0 || (final && buffer.length > 0 && (idx = buffer.length) > 0)) {
        const block = buffer.slice(0, idx);
        buffer = buffer.slice(idx + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
          .join("\n");
        if (data !== "") controller.enqueue(JSON.parse(data) as StreamFrame);
      }
    };
    super({
      transform(chunk, controller) {
        buffer += decoder.decode(chunk, { stream: true });
        flushBlocks(controller, false);
      },
      flush(controller) {
        buffer += decoder.decode();
        flushBlocks(controller, true);
      },
    });
  }
}
