/**
 * Which workspace tree belongs to a place in the session (docs/workspace.md, "Tree per event"): the
 * tree recorded by the nearest tool result at or above that event, or the empty tree. The workspace
 * therefore follows the session's event tree with no pointer of its own: a rewind or a branch switch
 * moves the active leaf, and the leaf's ancestry names the files. Pure: the recorded trees are data.
 */
import type { SessionTree } from "../session/tree.ts";
import { EMPTY_TREE_HASH } from "../../storage/files/objects.ts";

/** The key of a recorded tree: the run and the tool call whose result it follows. */
export function callKey(runId: string, toolCallId: string): string {
  return `${runId}\u0000${toolCallId}`;
}

export function treeAtEvent(tree: SessionTree, eventId: string | null, recorded: ReadonlyMap<string, string>): string {
  if (recorded.size === 0) return EMPTY_TREE_HASH;
  for (const event of tree.ancestors(eventId)) {
    if (event.type !== "message" || event.message.role !== "tool_result" || event.run_id === null) continue;
    const hash = recorded.get(callKey(event.run_id, event.message.tool_call_id));
    if (hash !== undefined) return hash;
  }
  return EMPTY_TREE_HASH;
}
