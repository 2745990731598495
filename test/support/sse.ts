/**
 * Reads a Server-Sent Events body into the JSON of its `data:` lines — the one SSE client of the
 * in-worker tests (workerd) and the e2e tests (Node), which both stream session frames.
 */

/** Frames until the stream ends or `stop` says so; the body is cancelled either way. */
export async function readSseFrames<T>(res: Response, stop: (frame: T, all: T[]) => boolean = () => false): Promise<T[]> {
  const frames: T[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return frames;
      buffer += decoder.decode(value, { stream: true });
      let idx: number;
      while ((idx = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, idx);
        buffer = buffer.slice(idx + 2);
        const data = block.split("\n").find((l) => l.startsWith("data: "));
        if (!data) continue;
        const frame = JSON.parse(data.slice(6)) as T;
        frames.push(frame);
        if (stop(frame, frames)) return frames;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
