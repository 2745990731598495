/**
 * The session stream's `frames` encoding (src/runtime/session/protocol.ts), written by the SessionDO
 * and read back by `SessionClient` into typed frames: frames split across chunks at any byte,
 * multi-byte text cut mid-character, a last line without its newline, blank lines skipped, and
 * `cancel` ending a read that waits. (Replaces the test of the edge's SSE re-reader, which is gone.)
 */
import { describe, expect, it } from "vitest";
import { FrameReader, frameLine, sseChunk } from "../../../src/runtime/session/protocol.ts";
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

describe("the frames encoding", () => {
  it("reads every frame whatever the chunking", async () => {
    const frames = [frame(1, "héllo 🦫"), frame(2, "line\nbreak\n\n"), frame(3, "end")];
    const text = frames.map(frameLine).join("\n"); // an extra blank line between frames is skipped
    for (const cut of [1, 3, 7, 64, text.length]) {
      const reader = new FrameReader(bodyOf(text.slice(0, -1), cut)); // the last line without its newline
      const got: StreamFrame[] = [];
      for await (const f of reader) got.push(f);
      expect(got).toEqual(frames);
    }
  });

  it("writes one line per frame, and the session face's SSE with seq and type", () => {
    const f = frame(7, "a\nb");
    expect(frameLine(f).split("\n")).toEqual([JSON.stringify(f), ""]);
    expect(sseChunk(f)).toBe(`id: 7\nevent: text_delta\ndata: ${JSON.stringify(f)}\n\n`);
  });

  it("cancel ends a read that waits and releases the body", async () => {
    let cancelled: unknown = null;
    const body = new ReadableStream<Uint8Array>({
      cancel(reason) {
        cancelled = reason ?? "cancelled";
      },
    });
    const reader = new FrameReader(body);
    const pending = reader.next();
    await reader.cancel("client left");
    expect(await pending).toBeNull();
    expect(cancelled).toBe("client left");
    expect(await reader.next()).toBeNull();
  });
});
