/**
 * The assistant message being generated right now, as the transient frames seen so far. A client
 * that (re)connects mid-message gets these after its replay of the persisted log, so it shows the
 * text so far instead of starting from an empty bubble. Pure: fed frames, answers frames.
 */
import type { StreamFrame, TransientEvent } from "./events.ts";

type Transient = TransientEvent & { persistent: false };
type Delta = Extract<TransientEvent, { type: "text_delta" | "thinking_delta" | "tool_call_delta" }>;

const DELTA_TYPES = new Set(["text_delta", "thinking_delta", "tool_call_delta"]);

export class InProgressMessage {
  #frames: Transient[] = [];
  #eventId: string | null = null;

  /** Watch every frame the session broadcasts. */
  observe(frame: StreamFrame): void {
    if (!frame.persistent) {
      if (frame.type === "message_start" && frame.role === "assistant") {
        this.#eventId = frame.event_id;
        this.#frames = [frame];
        return;
      }
      if (this.#eventId === null) return;
      if (frame.type === "message_cancelled" && frame.event_id === this.#eventId) return this.#clear();
      if (DELTA_TYPES.has(frame.type) && (frame as Delta).event_id === this.#eventId) this.#frames.push(frame);
      return;
    }
    if (frame.id === this.#eventId) this.#clear();
  }

  /** Drops the buffer (the run ended or the step was abandoned for the fallback model). */
  reset(): void {
    this.#clear();
  }

  /**
   * The in-progress frames with `seq > lastSeq`, adjacent deltas of the same kind coalesced into one
   * frame carrying the last seq they cover (so the client's last seq stays exact).
   */
  framesAfter(lastSeq: number): Transient[] {
    const out: Transient[] = [];
    for (const frame of this.#frames) {
      if (frame.seq <= lastSeq) continue;
      const prev = out[out.length - 1];
      if (prev && canMerge(prev, frame)) {
        out[out.length - 1] = { ...prev, seq: frame.seq, ts: frame.ts, delta: (prev as Delta).delta + (frame as Delta).delta } as Transient;
      } else {
        out.push(frame);
      }
    }
    return out;
  }

  #clear(): void {
    this.#frames = [];
    this.#eventId = null;
  }
}

function canMerge(a: Transient, b: Transient): boolean {
  if (a.type !== b.type || !DELTA_TYPES.has(a.type)) return false;
  if (a.type === "thinking_delta" && b.type === "thinking_delta") return a.block_index === b.block_index;
  if (a.type === "tool_call_delta" && b.type === "tool_call_delta") return a.tool_call_id === b.tool_call_id;
  return true;
}
