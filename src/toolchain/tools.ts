/** Tools for toolchain task runs: reporting and the Gitea actions. */
import type { ToolSpec } from "../tools/spec.ts";

export function toolchainTools(): ToolSpec<unknown>[] {
  return [];
}
