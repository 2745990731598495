/**
 * The memory domain's `MemoryProvider` (src/runtime/memory.ts), registered at the composition root:
 * when a run opens it renders the run's memory — its own scope's stores (an agent's, or the
 * workspace's), and for an agent's run the workspace's as well, marked shared — as the `memory`
 * section the run's system prompt freezes (docs/memory.md, "Frozen snapshot"). Entries are checked
 * again here, so one stored before a prompt-guard rule existed never reaches a prompt.
 */
import type { MemoryProvider, MemorySnapshotRequest } from "../../runtime/index.ts";
import type { Env } from "../../storage/env.ts";
import { MEMORY_STORES, STORE_PURPOSE, entryHazards, renderStore, runScope, type MemoryScope, type StoreView } from "./memory.ts";
import { viewStores } from "./store.ts";
import { RevisionCache } from "../../kernel/revision-cache.ts";

const INTRO =
  "What you curated with the memory tool, as it was when this run started. Changes you make now are saved at once " +
  "but appear here only from the next run.";

/** The stores with every entry the prompt guard refuses today left out (they stay listed in the API, to be removed). */
async function views(env: Env, scope: MemoryScope): Promise<StoreView[]> {
  const stores = await viewStores(env, scope, MEMORY_STORES);
  return stores.map((v) => ({ ...v, entries: v.entries.filter((e) => entryHazards(e.text).length === 0) }));
}

const title = (store: StoreView["store"]) => (store === "notes" ? "Notes" : "Profile");

/**
 * Snapshots by workspace and scope, under the content revision they were made at: a run whose revision
 * matches reuses the text instead of reading memory again (docs/performance.md, "Run-open reads").
 */
const snapshots = new RevisionCache<string>(256);

/** The `memory` section's text for a run (empty when nothing is remembered). */
export async function memorySnapshot(request: MemorySnapshotRequest): Promise<string> {
  if (!request.revision) return readSnapshot(request);
  const own = runScope(request.workspaceId, request.data);
  const revision = await request.revision;
  return snapshots.get(JSON.stringify([request.workspaceId, own.agentId ?? null]), revision, () => readSnapshot(request));
}

async function readSnapshot(request: MemorySnapshotRequest): Promise<string> {
  const own = runScope(request.workspaceId, request.data);
  const mine = await views(request.env, own);
  const shared = own.agentId ? await views(request.env, { workspaceId: request.workspaceId, agentId: null }) : [];
  if ([...mine, ...shared].every((v) => v.entries.length === 0)) return "";
  const parts = [INTRO];
  for (const v of mine) parts.push(renderStore(v, `${title(v.store)} — ${STORE_PURPOSE[v.store]}`));
  for (const v of shared) {
    if (v.entries.length > 0) parts.push(renderStore(v, `Workspace ${v.store.toLowerCase()} (shared; read-only for you)`));
  }
  return parts.join("\n\n");
}

export function memoryProvider(): MemoryProvider {
  return { snapshot: memorySnapshot };
}
