/**
 * Test helper: appends events the way a SessionDO does (ids, seq, parent = active leaf, hidden run
 * facts parentless) and keeps a SessionTree and the active leaf in step, so tests read like the
 * conversation they describe.
 */
import type { HiddenEvent, Message, PersistentBase, PersistentEvent, ToolCall, UserMessage } from "../../src/runtime/session/events.ts";
import { isHidden } from "../../src/runtime/session/events.ts";
import { SessionTree, activeLeafAfter } from "../../src/runtime/session/tree.ts";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type EventBody = DistributiveOmit<PersistentEvent, keyof PersistentBase>;

export class LogBuilder {
  readonly events: PersistentEvent[] = [];
  readonly tree = new SessionTree();
  leaf: string | null = null;
  runId: string | null = "run_1";
  #seq = 0;

  constructor(readonly sessionId = "ses_test") {}

  push<B extends EventBody>(body: B, opts: { parent?: string | null; id?: string } = {}): B & PersistentBase {
    this.#seq += 1;
    const parent = opts.parent !== undefined ? opts.parent : isHidden(body) ? null : this.leaf;
    const event = {
      id: opts.id ?? `e${this.#seq}`,
      parent_id: parent,
      seq: this.#seq * 2, // transient events share the counter, so persistent seqs have gaps
      session_id: this.sessionId,
      client_id: "client_test",
      ts: 1_700_000_000_000 + this.#seq,
      run_id: this.runId,
      ...body,
    };
    this.events.push(event as PersistentEvent);
    this.tree.add(event as PersistentEvent);
    this.leaf = activeLeafAfter(this.leaf, event as PersistentEvent);
    return event;
  }

  message(message: Message) {
    return this.push({ type: "message", message });
  }
  user(content: string, source?: NonNullable<UserMessage["meta"]>["source"]) {
    return this.message(source === undefined ? { role: "user", content } : { role: "user", content, meta: { source } });
  }
  assistant(text: string, toolCalls: ToolCall[] = []) {
    return this.message({ role: "assistant", text, tool_calls: toolCalls });
  }
  /** An assistant message calling one tool per name, ids `${prefix}_${i}`. */
  calls(prefix: string, ...names: string[]) {
    return this.assistant(
      "",
      names.map((name, i) => ({ id: `${prefix}_${i}`, name, args: { i } })),
    );
  }
  toolResult(toolCallId: string, content: string, toolName = "tool") {
    return this.message({ role: "tool_result", tool_call_id: toolCallId, tool_name: toolName, content, is_error: false });
  }
  rewind(target: string) {
    return this.push({ type: "rewind", target_event_id: target });
  }
  branch(leaf: string) {
    return this.push({ type: "branch", leaf_event_id: leaf });
  }
  compact(summary: string, through = this.leaf ?? "") {
    return this.push({ type: "compact", summary, compacted_through: through, tokens_before: 1000, tokens_after: 100 });
  }
  hidden(type: HiddenEvent["type"] = "run_started") {
    const bodies: { [T in HiddenEvent["type"]]: EventBody & { type: T } } = {
      run_started: { type: "run_started", input: { content: "x" } },
      system_prompt_snapshotted: { type: "system_prompt_snapshotted", prompt: "You are Beaver." },
      skill_activation_snapshotted: { type: "skill_activation_snapshotted", skills: [{ name: "s", version: "1" }] },
      run_completed: { type: "run_completed", result: { status: "completed" } },
      run_failed: { type: "run_failed", error: { code: "provider_error", message: "boom" } },
    };
    return this.push(bodies[type]);
  }
  custom(kind: string, data: unknown) {
    return this.push({ type: "custom", kind, data });
  }
  customMessage(kind: string, message: Message, data?: unknown) {
    return this.push({ type: "custom_message", kind, message, ...(data !== undefined ? { data } : {}) });
  }
  channel(channel: string, externalId: string) {
    return this.push({ type: "channel_inject", channel, external_id: externalId, metadata: { chat: "team" } });
  }
  sessionInfo(changes: Record<string, unknown>) {
    return this.push({ type: "session_info", changes });
  }
}

/** Deterministic PRNG (mulberry32) so randomised tests are reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
