/**
 * The pure frame → UI chunk mapping (src/runtime/session/ui-chunks.ts; docs/ui-stream.md): a live
 * run and the same run replayed give the same UI message, read by the `ai` package's own reader.
 */
import { describe, expect, it } from "vitest";
import { readUIMessageStream, type UIMessage } from "ai";
import { UiChunkMapper, type BeaverUIChunk, type BeaverUIMetadata } from "../../../src/runtime/session/ui-chunks.ts";
import type { Message, StreamFrame, TransientEvent } from "../../../src/runtime/session/events.ts";

const S = "ses_x";
const R = "run_1";
let seq = 0;
const base = () => ({ seq: ++seq, session_id: S, client_id: "c", ts: 0, run_id: R });
type TransientFields = TransientEvent extends infer E
  ? E extends unknown
    ? Omit<E, "seq" | "session_id" | "client_id" | "ts" | "run_id">
    : never
  : never;
const t = (e: TransientFields): StreamFrame => ({ persistent: false, ...base(), ...e }) as StreamFrame;
const msg = (id: string, message: Message): StreamFrame => ({ persistent: true, ...base(), id, parent_id: null, type: "message", message });

const usage = { input_tokens: 10, output_tokens: 4, total_tokens: 14 };

/** A run: user message, a tool-calling step, the tool, a text step with reasoning, the end. */
function liveRun(): StreamFrame[] {
  return [
    msg("evt_u", { role: "user", content: "what time is it?" }),
    t({ type: "turn_start", turn_index: 0 }),
    t({ type: "message_start", event_id: "evt_a1", parent_id: "evt_u", role: "assistant", model: "m-1" }),
    t({ type: "tool_call_delta", event_id: "evt_a1", tool_call_id: "call_1", tool_name: "current_time", delta: '{"tz":' }),
    t({ type: "tool_call_delta", event_id: "evt_a1", tool_call_id: "call_1", delta: '"UTC"}' }),
    msg("evt_a1", {
      role: "assistant",
      text: "",
      tool_calls: [{ id: "call_1", name: "current_time", args: { tz: "UTC" } }],
      provider: "p",
      model: "m-1",
      usage,
      finish_reason: "tool-calls",
    }),
    t({
      type: "tool_execution_start",
      event_id: "evt_t1",
      parent_id: "evt_a1",
      tool_call_id: "call_1",
      tool_name: "current_time",
      args: { tz: "UTC" },
    }),
    msg("evt_t1", { role: "tool_result", tool_call_id: "call_1", tool_name: "current_time", content: "12:00", is_error: false }),
    t({
      type: "tool_execution_end",
      event_id: "evt_t1",
      tool_call_id: "call_1",
      tool_name: "current_time",
      duration_ms: 1,
      is_error: false,
    }),
    t({ type: "message_start", event_id: "evt_a2", parent_id: "evt_t1", role: "assistant", model: "m-1" }),
    t({ type: "thinking_delta", event_id: "evt_a2", delta: "look at the ", block_index: 0 }),
    t({ type: "thinking_delta", event_id: "evt_a2", delta: "result", block_index: 0 }),
    t({ type: "text_delta", event_id: "evt_a2", delta: "It is " }),
    t({ type: "text_delta", event_id: "evt_a2", delta: "noon." }),
    msg("evt_a2", {
      role: "assistant",
      text: "It is noon.",
      reasoning: "look at the result",
      tool_calls: [],
      provider: "p",
      model: "m-1",
      usage,
      finish_reason: "stop",
    }),
    t({ type: "runtime_end", reason: "completed" }),
  ];
}

async function read(chunks: BeaverUIChunk[]): Promise<UIMessage<BeaverUIMetadata>> {
  const stream = new ReadableStream<BeaverUIChunk>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  let last: UIMessage<BeaverUIMetadata> | undefined;
  for await (const m of readUIMessageStream<UIMessage<BeaverUIMetadata>>({ stream, terminateOnError: true })) last = m;
  if (!last) throw new Error("no message");
  return last;
}

function map(frames: StreamFrame[], ending?: Parameters<UiChunkMapper["finish"]>[0]): BeaverUIChunk[] {
  const mapper = new UiChunkMapper(S, R);
  const out = mapper.start();
  for (const f of frames) out.push(...mapper.push(f));
  out.push(...mapper.finish(ending));
  return out;
}

/** The parts of a UI message without the step markers, in a comparable shape. */
function shape(m: UIMessage) {
  return m.parts
    .filter((p) => p.type !== "step-start")
    .map((p) => {
      if (p.type === "text" || p.type === "reasoning") return { type: p.type, text: p.text };
      if (p.type === "dynamic-tool")
        return {
          type: p.type,
          name: p.toolName,
          id: p.toolCallId,
          state: p.state,
          input: p.input,
          output: "output" in p ? p.output : undefined,
        };
      return { type: p.type };
    });
}

describe("UI chunk mapping", () => {
  it("maps a live run to text, reasoning, a tool call with its result, and finish with usage and the model", async () => {
    const chunks = map(liveRun());
    expect(chunks[0]).toEqual({ type: "start", messageId: R, messageMetadata: { session_id: S, run_id: R } });
    expect(chunks.map((c) => c.type)).toContain("tool-input-start");
    expect(chunks.filter((c) => c.type === "text-delta").map((c) => (c as { delta: string }).delta)).toEqual(["It is ", "noon."]);
    const finish = chunks[chunks.length - 1]!;
    expect(finish).toEqual({
      type: "finish",
      finishReason: "stop",
      messageMetadata: {
        session_id: S,
        run_id: R,
        provider: "p",
        model: "m-1",
        usage: { input_tokens: 20, output_tokens: 8, total_tokens: 28 },
        status: "completed",
      },
    });
    const message = await read(chunks);
    expect(message.id).toBe(R);
    expect(shape(message)).toEqual([
      { type: "dynamic-tool", name: "current_time", id: "call_1", state: "output-available", input: { tz: "UTC" }, output: "12:00" },
      { type: "reasoning", text: "look at the result" },
      { type: "text", text: "It is noon." },
    ]);
    expect(message.metadata?.model).toBe("m-1");
  });

  it("a replay (persisted events only, no deltas) gives the same message as the live run", async () => {
    const replay = liveRun().filter((f) => f.persistent);
    const live = await read(map(liveRun()));
    const replayed = await read(map(replay, { status: "completed" }));
    expect(shape(replayed)).toEqual(shape(live));
    expect(replayed.metadata).toEqual(live.metadata);
  });

  it("a replay that ends mid-message (persisted, then the in-progress deltas) continues the text", async () => {
    const frames = liveRun();
    const cut = frames.findIndex((f) => f.type === "text_delta");
    const partial = [
      ...frames.slice(0, cut).filter((f) => f.persistent),
      t({ type: "message_start", event_id: "evt_a2", parent_id: "evt_t1", role: "assistant" }),
      t({ type: "text_delta", event_id: "evt_a2", delta: "It is " }),
    ];
    const mapper = new UiChunkMapper(S, R);
    const chunks = mapper.start();
    for (const f of partial) chunks.push(...mapper.push(f));
    // The live rest: the remaining delta and the persisted message only close the part.
    for (const f of frames.slice(frames.findIndex((f) => f.type === "text_delta") + 1)) chunks.push(...mapper.push(f));
    chunks.push(...mapper.finish());
    const message = await read(chunks);
    expect(message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual(["It is noon."]);
  });

  it("a failed tool gives tool-output-error; a failed run ends with an error chunk and finish reason error", async () => {
    const frames: StreamFrame[] = [
      t({ type: "message_start", event_id: "evt_a1", parent_id: null, role: "assistant" }),
      msg("evt_a1", { role: "assistant", text: "", tool_calls: [{ id: "c1", name: "echo", args: {} }], finish_reason: "tool-calls" }),
      msg("evt_t1", { role: "tool_result", tool_call_id: "c1", tool_name: "echo", content: "bad input", is_error: true }),
      msg("evt_e", {
        role: "assistant",
        text: "",
        tool_calls: [],
        error: { code: "provider_error", message: "HTTP 500" },
        finish_reason: "error",
      }),
      t({ type: "runtime_end", reason: "error", error: "HTTP 500" }),
    ];
    const chunks = map(frames);
    expect(chunks).toContainEqual({ type: "tool-output-error", toolCallId: "c1", errorText: "bad input", dynamic: true });
    expect(chunks.slice(-2)).toEqual([
      { type: "error", errorText: "HTTP 500" },
      { type: "finish", finishReason: "error", messageMetadata: { session_id: S, run_id: R, status: "failed" } },
    ]);
  });

  it("ignores other runs' frames and closes an abandoned step's open text", () => {
    const mapper = new UiChunkMapper(S, R);
    mapper.start();
    expect(mapper.push({ ...t({ type: "text_delta", event_id: "e", delta: "x" }), run_id: "other" } as StreamFrame)).toEqual([]);
    mapper.push(t({ type: "text_delta", event_id: "e", delta: "x" }));
    expect(mapper.push(t({ type: "message_cancelled", event_id: "e", reason: "error" }))).toEqual([
      { type: "text-end", id: "e" },
      { type: "finish-step" },
    ]);
    expect(mapper.finish({ status: "cancelled" }).pop()).toMatchObject({ type: "finish", finishReason: "other" });
    expect(mapper.finish()).toEqual([]);
  });
});
