/**
 * How curated memory reaches a run (docs/memory.md): the runtime knows only this interface; the memory
 * domain implements it and the composition root hands it over in `RuntimeServices.memory`
 * (docs/layering.md, "Registration instead of imports"). The run asks once, when it opens, and the
 * answer becomes the `memory` section of the snapshotted system prompt: a frozen snapshot, so a write
 * during the run is durable at once but reaches the prompt only from the next run.
 */
import type { Env } from "../storage/env.ts";

export interface MemorySnapshotRequest {
  env: Env;
  workspaceId: string;
  sessionId: string;
  /** The run's `tool_data` (the provider decides the scope from it, as the memory tool does). */
  data: Readonly<Record<string, unknown>>;
  /**
   * The workspace's content revision, read with the config (null when it could not be read): the same
   * revision means memory is as it was, so a provider may reuse the snapshot it made under it.
   */
  revision?: Promise<string | null>;
}

export interface MemoryProvider {
  /** The `memory` section's text (without its heading), or "" when there is nothing to remember. */
  snapshot(request: MemorySnapshotRequest): Promise<string>;
}
