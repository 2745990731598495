/** The builtin tools every session gets. */
import type { ToolSpec } from "../spec.ts";
import { currentTimeTool } from "./current-time.ts";
import { echoTool } from "./echo.ts";

export function builtinTools(): ToolSpec<unknown>[] {
  return [echoTool, currentTimeTool];
}
