/**
 * Learning candidate records of kind `plugin_skill_update`. The evidence holds references only
 * (plugin, skill, hashes, versions); the learning pipeline resolves the snapshots from the store.
 */
export type CandidateStatus = "pending" | "pending_synthesis" | "drafted" | "synthesis_failed" | "superseded" | "published" | "rejected";
export type MergeMode = "fast_forward" | "three_way";

/** Statuses in which a candidate still waits for work (the plugin skill shows `update_pending`). */
/** `synthesis_failed`: the merge could not finish (its draft says why); regenerating tries again. */
export const OPEN_CANDIDATE_STATUSES: readonly CandidateStatus[] = ["pending", "pending_synthesis", "drafted", "synthesis_failed"];

export interface PluginUpdateEvidence {
  plugin_id: string;
  plugin_version: string | null;
  skill_name: string;
  merge_mode: MergeMode;
  base_upstream_tree_hash: string;
  new_upstream_tree_hash: string;
  local_version: string;
  local_tree_hash: string;
}

/** Provenance of a version or draft that came from a plugin update. */
export interface PluginUpdateProvenance extends PluginUpdateEvidence {
  kind: "plugin_skill_update";
  candidate_id: string;
  draft_id?: string;
}

export function isOpen(status: string): boolean {
  return (OPEN_CANDIDATE_STATUSES as readonly string[]).includes(status);
}
