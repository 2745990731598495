/**
 * Where a run stands, read from the log alone — so a run resumed after an eviction continues
 * exactly where its last persisted step left it. Pure: walks the tree from the active leaf.
 *
 * - `model`: the next thing is a model step (the run's user message, complete tool results or a
 *   steer message are at the leaf).
 * - `tools`: the latest assistant message of the run has calls without results.
 * - `done`: the latest assistant message of the run answered without calls and nothing came after.
 */
import type { AssistantMessage, ToolCall } from "./events.ts";
import type { SessionTree } from "./tree.ts";

export type RunProgress =
  { next: "model" } | { next: "tools"; assistantId: string; pending: ToolCall[] } | { next: "done"; assistant: AssistantMessage };

const PASSED_THROUGH: ReadonlySet<string> = new Set(["tool_approval_requested", "tool_approval_decided", "channel_inject"]);

export function runProgress(tree: SessionTree, leafId: string | null, runId: string): RunProgress {
  const results = new Set<string>();
  let sawLaterInput = false;
  for (const event of tree.ancestors(leafId)) {
    if (event.run_id !== runId) return { next: "model" };
    // Approvals and channel facts of the run sit on its path without being a step of their own.
    if (PASSED_THROUGH.has(event.type)) continue;
    if (event.type !== "message") return { next: "model" };
    const message = event.message;
    switch (message.role) {
      case "tool_result":
        results.add(message.tool_call_id);
        break;
      case "user":
        // A steer message after the latest answer: the run goes on. The run's own opening message:
        // nothing answered yet.
        if (message.meta?.source === undefined) return { next: "model" };
        sawLaterInput = true;
        break;
      case "assistant": {
        const pending = message.tool_calls.filter((c) => !results.has(c.id));
        if (pending.length > 0) return { next: "tools", assistantId: event.id, pending };
        if (message.tool_calls.length === 0 && !sawLaterInput) return { next: "done", assistant: message };
        return { next: "model" };
      }
    }
  }
  return { next: "model" };
}
