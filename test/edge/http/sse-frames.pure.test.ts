/**
 * Reading the session's SSE back into frames (src/edge/http/ui-stream/sse-frames.ts): frames split
 * across chunks at any byte, keep-alive comments, multi-byte text cut mid-character, a last block
 * without its blank line.
 */
import { describe, expect, it } from "vitest";
import { sseFrameReader } from "../../../src/edge/http/ui-stream/sse-frames.ts";
import type { StreamFrame } from "../../../src/runtime/session/events.ts";

function bodyOf(text: string, cut: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += cut) c.enqueue(bytes.slice(i, i + cut));
      c.close();
    },
  });
}

const frame = (seq: number, delta: string) =>
  ({
    persistent: false,
    seq,
    session_id: "s",
    client_id: "c",
    ts: 0,
    run_id: "r",
    type: "text_delta",
    event_id: "e",
    delta,
  }) as StreamFrame;

describe("sseFrameReader", () => {
  it("reads every frame whatever the chunking, skipping comments", async () => {
    const frames = [frame(1, "héllo 🦫"), frame(2, "line\nbreak"), frame(3, "end")];
    const text =
      ": connected c\n\n" +
      frames.map((f, i) => `id: ${f.seq}\nevent: ${f.type}\ndata: ${JSON.stringify(f)}\n\n${i === 0 ? ": keep-alive\n\n" : ""}`).join("");
    for (const cut of [1, 3, 7, 64, text.length]) {
      const reader = sseFrameReader(bodyOf(text.slice(0, -2), cut)); // the last block without its blank line
      const got: StreamFrame[] = [];
      for (let f = await reader.next(); f !== null; f = await reader.next()) got.push(f);
      expect(got).toEqual(frames);
    }
  });
});
