/**
 * The file-changing events on a path through the session (docs/workspace.md, "API"): each tool result
 * whose call recorded a workspace tree, with the call's tool name, its shell command (for `bash`,
 * so a reader — the console's Files panel — can tell a `git clone` from other calls) and the tree it
 * left. Pure: the path and the recorded trees are data.
 */
import type { VisibleEvent } from "../session/events.ts";
import { EMPTY_TREE_HASH } from "../../storage/files/objects.ts";
import { callKey } from "./tree-at.ts";

/** How much of a call's `command` argument a change carries. */
const COMMAND_MAX_CHARS = 200;

export interface FileChangeEvent {
  event_id: string;
  seq: number;
  ts: number;
  run_id: string;
  tool_call_id: string;
  tool_name: string;
  /** The call's `command` argument when it has one (`bash`), cut to 200 characters; else null. */
  command: string | null;
  tree_hash: string;
  /** Whether the tree differs from the one before this call on the path. */
  changed: boolean;
}

/** The file-changing events on `path` (root → leaf), oldest first. */
export function fileChangesOnPath(path: readonly VisibleEvent[], recorded: ReadonlyMap<string, string>): FileChangeEvent[] {
  const out: FileChangeEvent[] = [];
  if (recorded.size === 0) return out;
  const commands = new Map<string, string>();
  let previous = EMPTY_TREE_HASH;
  for (const event of path) {
    if (event.type !== "message") continue;
    const message = event.message;
    if (message.role === "assistant") {
      for (const call of message.tool_calls) {
        const command = (call.args as { command?: unknown } | null)?.command;
        if (typeof command === "string") commands.set(call.id, command.slice(0, COMMAND_MAX_CHARS));
      }
      continue;
    }
    if (message.role !== "tool_result" || event.run_id === null) continue;
    const hash = recorded.get(callKey(event.run_id, message.tool_call_id));
    if (hash === undefined) continue;
    out.push({
      event_id: event.id,
      seq: event.seq,
      ts: event.ts,
      run_id: event.run_id,
      tool_call_id: message.tool_call_id,
      tool_name: message.tool_name,
      command: commands.get(message.tool_call_id) ?? null,
      tree_hash: hash,
      changed: hash !== previous,
    });
    previous = hash;
  }
  return out;
}
