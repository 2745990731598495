/**
 * The upgrade classification for one linked skill (docs/skills-and-plugins.md, "Plugins"), as a pure
 * function of three tree hashes: B (last accepted upstream), L (current Beaver version), U (newly
 * observed upstream). The rows are checked in order, so U == B wins over L == U.
 *
 * | condition                      | action         |
 * | U == B                         | none           |
 * | L == U                         | acknowledge    |
 * | L == B and U != B              | fast_forward   |
 * | L != B and U != B              | three_way      |
 */
export type UpgradeAction = "none" | "acknowledge" | "fast_forward" | "three_way";

export interface UpgradeInputs {
  base: string;
  local: string;
  upstream: string;
}

export function classifyUpgrade({ base, local, upstream }: UpgradeInputs): UpgradeAction {
  if (upstream === base) return "none";
  if (local === upstream) return "acknowledge";
  if (local === base) return "fast_forward";
  return "three_way";
}

/** Length of the upstream hash prefix in candidate ids. */
export const CANDIDATE_HASH_PREFIX = 12;

/** `plugin-update:<plugin-id>:<skill-name>:<new-upstream-hash-prefix>` — the same inputs always give the same id. */
export function pluginUpdateCandidateId(pluginId: string, skillName: string, upstreamTreeHash: string): string {
  return `plugin-update:${pluginId}:${skillName}:${upstreamTreeHash.slice(0, CANDIDATE_HASH_PREFIX)}`;
}
