/** The builtin tools every session gets. */
import type { ToolSpec } from "../spec.ts";

export function builtinTools(): ToolSpec<unknown>[] {
  return [];
}
