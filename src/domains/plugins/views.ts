/**
 * Plugin state as the API shows it (snake_case, workspace-relative paths only): the plugin's
 * stored state plus discovery status, declared skills and their current Beaver versions.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import { listSkillRows } from "../skills/store.ts";
import { discoveredSkillsOf, listPluginRows, listPluginSkillRows, packageErrorsOf, packageWarningsOf, type PluginRow } from "./state.ts";

export type PluginState = "discovered" | "enabled" | "paused" | "disabled" | "missing" | "error";

export function pluginState(p: PluginRow): PluginState {
  if (p.packageStatus === "missing") return "missing";
  if (p.packageStatus === "invalid" && !p.enabled) return "error";
  if (p.enabled) return p.updatesPaused ? "paused" : "enabled";
  return p.enabledAt !== null ? "disabled" : "discovered";
}

export async function listPluginsView(env: Env, workspaceId: string, only?: string) {
  const db = makeDb(env.DB);
  const [rows, links, skills] = await Promise.all([
    listPluginRows(db, workspaceId),
    listPluginSkillRows(db, workspaceId),
    listSkillRows(db, workspaceId),
  ]);
  const skillByName = new Map(skills.map((s) => [s.name, s]));
  return rows
    .filter((p) => only === undefined || p.id === only)
    .map((p) => {
      const declared = new Map(discoveredSkillsOf(p).map((s) => [s.name, s]));
      const linked = links.filter((l) => l.pluginId === p.id);
      const names = [...new Set([...declared.keys(), ...linked.map((l) => l.skillName)])].sort();
      return {
        id: p.id,
        name: p.name,
        description: p.description,
        origin: p.origin,
        source_id: p.sourceId,
        manifest_kind: p.manifestKind,
        manifest_path: p.manifestPath,
        state: pluginState(p),
        enabled: p.enabled,
        updates_paused: p.updatesPaused,
        package_status: p.packageStatus,
        errors: packageErrorsOf(p),
        warnings: packageWarningsOf(p),
        installed_version: p.installedVersion,
        discovered_version: p.discoveredVersion,
        discovered_at: p.discoveredAt,
        last_sync_at: p.lastSyncAt,
        skills: names.map((name) => {
          const d = declared.get(name);
          const l = linked.find((x) => x.skillName === name);
          const s = skillByName.get(name);
          const owned = s && l && l.status !== "adopted";
          return {
            name,
            declared: d !== undefined,
            linked: l !== undefined && l.status !== "adopted",
            source_path: d?.path ?? null,
            discovered_upstream_tree_hash: d?.treeHash ?? null,
            safety_level: d?.safety.level ?? null,
            // Accepted but worth knowing (e.g. a description over the specification's 1024 characters).
            warnings: d?.warnings ?? [],
            status: l?.status ?? "not_linked",
            accepted_upstream_tree_hash: l?.acceptedUpstreamTreeHash ?? null,
            observed_upstream_tree_hash: l?.observedUpstreamTreeHash ?? null,
            accepted_beaver_version: l ? versionLabel(l.acceptedBeaverVersionNo) : null,
            current_beaver_version: owned ? versionLabel(s.currentVersionNo) : null,
            skill_status: owned ? s.status : null,
            pending_candidate_id: l?.pendingCandidateId ?? null,
          };
        }),
      };
    });
}
