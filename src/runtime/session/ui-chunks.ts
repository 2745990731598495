/**
 * One run's stream frames as AI SDK UI message chunks (docs/ui-stream.md), so a `useChat` client
 * reads a Beaver run like any AI SDK route. Pure: frames in, chunks out. The same mapper serves a
 * live run and a replayed one (a resume after a reload): a persisted assistant message whose deltas
 * were never seen is sent whole, one whose deltas were seen only closes its parts.
 */
import type { UIMessageChunk } from "ai";
import type { AssistantMessage, StreamFrame, Usage } from "./events.ts";
import { addUsage } from "./usage.ts";

/** Metadata of the UI message: which session and run, which model answered, and the usage. */
export interface BeaverUIMetadata {
  session_id: string;
  run_id: string;
  provider?: string;
  model?: string;
  usage?: Usage;
  status?: "completed" | "failed" | "cancelled";
}

export type BeaverUIChunk = UIMessageChunk<BeaverUIMetadata>;

/** How a run ended, when the caller knows it better than the frames did (a replay carries no `runtime_end`). */
export interface RunEnding {
  status: "completed" | "failed" | "cancelled" | "queued" | "running";
  error?: { code: string; message: string };
  usage?: Usage;
  provider?: string | null;
  model?: string | null;
}

type FinishReason = "stop" | "length" | "tool-calls" | "error" | "other" | "content-filter";

export class UiChunkMapper {
  readonly #meta: BeaverUIMetadata;
  /** Open text / reasoning parts by id; each open part is ended before its message's step finishes. */
  #openText = new Set<string>();
  #openReasoning = new Set<string>();
  /** Events whose deltas we streamed (their persisted message then only closes parts). */
  #streamed = new Set<string>();
  /** Tool calls whose input was announced (start or available). */
  #inputStarted = new Set<string>();
  #inputAvailable = new Set<string>();
  #stepOpen = false;
  #started = false;
  #finished = false;
  #lastFinishReason: string | undefined;
  #ending: RunEnding["status"] | null = null;
  #error: string | null = null;

  constructor(sessionId: string, runId: string) {
    this.#meta = { session_id: sessionId, run_id: runId };
  }

  /** The chunks that open the UI message (sent before any frame). */
  start(): BeaverUIChunk[] {
    if (this.#started) return [];
    this.#started = true;
    return [{ type: "start", messageId: this.#meta.run_id, messageMetadata: { ...this.#meta } }];
  }

  get finished(): boolean {
    return this.#finished;
  }

  push(frame: StreamFrame): BeaverUIChunk[] {
    if (this.#finished || frame.run_id !== this.#meta.run_id) return [];
    const out = this.start();
    if (!frame.persistent) {
      switch (frame.type) {
        case "message_start":
          if (frame.role === "assistant") {
            out.push(...this.#openStep());
            if (frame.model !== undefined && frame.model !== this.#meta.model) {
              this.#meta.model = frame.model;
              out.push({ type: "message-metadata", messageMetadata: { ...this.#meta } });
            }
          }
          break;
        case "text_delta":
          if (frame.delta === "") break;
          this.#streamed.add(frame.event_id);
          out.push(...this.#openStep());
          if (!this.#openText.has(frame.event_id)) {
            this.#openText.add(frame.event_id);
            out.push({ type: "text-start", id: frame.event_id });
          }
          out.push({ type: "text-delta", id: frame.event_id, delta: frame.delta });
          break;
        case "thinking_delta": {
          if (frame.delta === "") break;
          const id = `${frame.event_id}:r${frame.block_index}`;
          this.#streamed.add(frame.event_id);
          out.push(...this.#openStep());
          if (!this.#openReasoning.has(id)) {
            this.#openReasoning.add(id);
            out.push({ type: "reasoning-start", id });
          }
          out.push({ type: "reasoning-delta", id, delta: frame.delta });
          break;
        }
        case "tool_call_delta":
          this.#streamed.add(frame.event_id);
          out.push(...this.#openStep());
          if (!this.#inputStarted.has(frame.tool_call_id)) {
            if (frame.tool_name === undefined) break; // a delta before the name is announced cannot open a part
            this.#inputStarted.add(frame.tool_call_id);
            out.push({ type: "tool-input-start", toolCallId: frame.tool_call_id, toolName: frame.tool_name, dynamic: true });
          }
          if (frame.delta !== "") out.push({ type: "tool-input-delta", toolCallId: frame.tool_call_id, inputTextDelta: frame.delta });
          break;
        case "tool_execution_start":
          if (!this.#inputAvailable.has(frame.tool_call_id))
            out.push(...this.#inputAvailableChunk(frame.tool_call_id, frame.tool_name, frame.args));
          break;
        case "message_cancelled":
          // The step was abandoned (fallback model, cancel, error): close what it opened.
          out.push(...this.#closeParts(), ...this.#closeStep());
          break;
        case "runtime_end":
          this.#ending = frame.reason === "completed" ? "completed" : frame.reason === "cancelled" ? "cancelled" : "failed";
          if (frame.error !== undefined) this.#error = frame.error;
          break;
        default:
          break;
      }
      return out;
    }
    if (frame.type !== "message") return out;
    const message = frame.message;
    if (message.role === "assistant") out.push(...this.#assistant(frame.id, message));
    else if (message.role === "tool_result") {
      // The input is announced first when the result is all we saw (a replay of a finished step).
      if (!this.#inputAvailable.has(message.tool_call_id))
        out.push(...this.#inputAvailableChunk(message.tool_call_id, message.tool_name, {}));
      out.push(
        message.is_error
          ? { type: "tool-output-error", toolCallId: message.tool_call_id, errorText: message.content, dynamic: true }
          : { type: "tool-output-available", toolCallId: message.tool_call_id, output: message.content, dynamic: true },
      );
    }
    // User messages (the submitted one, steers) are the client's own; they are not part of the answer.
    return out;
  }

  /** Closes the message: open parts, the step, an error when the run failed, and `finish` with usage and model. */
  finish(ending?: RunEnding): BeaverUIChunk[] {
    if (this.#finished) return [];
    const out = this.start();
    out.push(...this.#closeParts(), ...this.#closeStep());
    const status = ending?.status ?? this.#ending ?? "completed";
    if (ending?.usage) this.#meta.usage = ending.usage;
    if (ending?.model) this.#meta.model = ending.model;
    if (ending?.provider) this.#meta.provider = ending.provider;
    const errorText = ending?.error?.message ?? this.#error;
    if (status === "failed") out.push({ type: "error", errorText: errorText ?? "The run failed" });
    if (status === "completed" || status === "failed" || status === "cancelled") this.#meta.status = status;
    this.#finished = true;
    out.push({
      type: "finish",
      finishReason: status === "failed" ? "error" : status === "cancelled" ? "other" : finishReasonOf(this.#lastFinishReason),
      messageMetadata: { ...this.#meta },
    });
    return out;
  }

  #assistant(eventId: string, message: AssistantMessage): BeaverUIChunk[] {
    const out: BeaverUIChunk[] = [];
    if (message.error) {
      // The visible error message of a failed run: the `error` chunk comes with `finish`.
      this.#error = message.error.message;
      return out;
    }
    out.push(...this.#openStep());
    const streamed = this.#streamed.has(eventId);
    if (!streamed) {
      if (message.reasoning) {
        const id = `${eventId}:r0`;
        out.push({ type: "reasoning-start", id }, { type: "reasoning-delta", id, delta: message.reasoning }, { type: "reasoning-end", id });
      }
      if (message.text) {
        out.push(
          { type: "text-start", id: eventId },
          { type: "text-delta", id: eventId, delta: message.text },
          { type: "text-end", id: eventId },
        );
      }
    }
    out.push(...this.#closeParts());
    for (const call of message.tool_calls) {
      if (!this.#inputAvailable.has(call.id)) out.push(...this.#inputAvailableChunk(call.id, call.name, call.args));
    }
    if (message.provider !== undefined) this.#meta.provider = message.provider;
    if (message.model !== undefined) this.#meta.model = message.model;
    if (message.usage) this.#meta.usage = this.#meta.usage ? addUsage(this.#meta.usage, message.usage) : { ...message.usage };
    this.#lastFinishReason = message.finish_reason;
    out.push({ type: "message-metadata", messageMetadata: { ...this.#meta } }, ...this.#closeStep());
    return out;
  }

  #inputAvailableChunk(toolCallId: string, toolName: string, input: unknown): BeaverUIChunk[] {
    const out: BeaverUIChunk[] = [...this.#openStep()];
    this.#inputStarted.add(toolCallId);
    this.#inputAvailable.add(toolCallId);
    out.push({ type: "tool-input-available", toolCallId, toolName, input: input ?? {}, dynamic: true });
    return out;
  }

  #openStep(): BeaverUIChunk[] {
    if (this.#stepOpen) return [];
    this.#stepOpen = true;
    return [{ type: "start-step" }];
  }

  #closeStep(): BeaverUIChunk[] {
    if (!this.#stepOpen) return [];
    this.#stepOpen = false;
    return [{ type: "finish-step" }];
  }

  #closeParts(): BeaverUIChunk[] {
    const out: BeaverUIChunk[] = [];
    for (const id of this.#openReasoning) out.push({ type: "reasoning-end", id });
    for (const id of this.#openText) out.push({ type: "text-end", id });
    this.#openReasoning.clear();
    this.#openText.clear();
    return out;
  }
}

function finishReasonOf(reason: string | undefined): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "tool-calls":
    case "error":
    case "content-filter":
      return reason;
    case undefined:
      return "stop";
    default:
      return "other";
  }
}
