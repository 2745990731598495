/** Test helpers for plugin flows: build packages, call the plugin API, read state. */
import { env } from "cloudflare:workers";
import { call, json } from "./api.ts";
import { tarGz, type TarEntryInput } from "../fixtures/skills/archives.ts";
import { beaverManifest } from "../fixtures/skills/bundles.ts";

export type SkillFiles = Record<string, string | Uint8Array>;
export type J = Record<string, unknown> & { error?: { code: string; message: string; details?: unknown } };

/** A tar.gz plugin package: beaver.plugin.json plus skills/<name>/… (executables by skill-relative path). */
export async function pluginPackage(
  id: string,
  version: string,
  skills: Record<string, SkillFiles>,
  opts: { prefix?: string; executables?: string[] } = {},
): Promise<Uint8Array> {
  const pre = opts.prefix ? `${opts.prefix}/` : "";
  const entries: TarEntryInput[] = [{ name: `${pre}beaver.plugin.json`, data: beaverManifest(id, version, Object.keys(skills)) }];
  for (const [name, files] of Object.entries(skills)) {
    for (const [path, data] of Object.entries(files)) {
      entries.push({ name: `${pre}skills/${name}/${path}`, data, mode: opts.executables?.includes(path) ? 0o755 : 0o644 });
    }
  }
  return tarGz(entries);
}

export async function uploadPackage(token: string, bytes: Uint8Array): Promise<{ status: number; body: J }> {
  const res = await call("PUT", "/api/plugins/packages", { token, rawBody: bytes, headers: { "Content-Type": "application/gzip" } });
  return { status: res.status, body: await json<J>(res) };
}

export async function post(token: string, path: string, body?: unknown): Promise<{ status: number; body: J; headers: Headers }> {
  const res = await call("POST", path, { token, ...(body !== undefined ? { body } : {}) });
  return { status: res.status, body: await json<J>(res), headers: res.headers };
}

export interface PluginSkillView {
  name: string;
  status: string;
  accepted_upstream_tree_hash: string | null;
  observed_upstream_tree_hash: string | null;
  discovered_upstream_tree_hash: string | null;
  accepted_beaver_version: string | null;
  current_beaver_version: string | null;
  pending_candidate_id: string | null;
  skill_status: string | null;
  linked: boolean;
}
export interface PluginView {
  id: string;
  state: string;
  enabled: boolean;
  updates_paused: boolean;
  package_status: string;
  installed_version: string | null;
  discovered_version: string | null;
  errors: { path: string; field?: string; message: string }[];
  skills: PluginSkillView[];
}

export async function plugin(token: string, id: string): Promise<PluginView> {
  const all = await json<{ plugins: PluginView[] }>(await call("GET", "/api/plugins", { token }));
  const p = all.plugins.find((x) => x.id === id);
  if (!p) throw new Error(`plugin ${id} not listed`);
  return p;
}

export interface CandidateView {
  id: string;
  status: string;
  merge_mode: string;
  evidence: Record<string, unknown>;
  merge_plan: {
    skill_md: string;
    conflicts: { path: string; kind: string }[];
    blocked: boolean;
    files: { path: string; resolution: string }[];
  } | null;
  draft_id: string | null;
  superseded_by: string | null;
  blocked_by_draft_id: string | null;
}
export interface DraftView {
  id: string;
  candidate_id: string | null;
  status: string;
  tree_hash: string;
  provenance: Record<string, unknown>;
}

export async function candidates(token: string, skill: string): Promise<{ candidates: CandidateView[]; drafts: DraftView[] }> {
  return json(await call("GET", `/api/skills/${skill}/candidates`, { token }));
}

export async function versionsOf(workspaceId: string, skill: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM skill_versions WHERE workspace_id = ? AND skill_name = ?")
    .bind(workspaceId, skill)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
