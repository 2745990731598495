/**
 * The sensitive changes of a stored draft (sensitive-changes.ts) for the gates and the review page:
 * its SKILL.md against the skill's current version's, and its merge report's preservation.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { readBlob, requireManifest } from "../../storage/blob/store.ts";
import type { DraftRow } from "../skills/candidate-store.ts";
import { getSkill, getVersion } from "../skills/store.ts";
import type { PreservationReport } from "./preservation.ts";
import { sensitiveChanges, type SensitiveItem } from "./sensitive-changes.ts";

async function skillMdText(env: Env, workspaceId: string, treeHash: string): Promise<string | null> {
  const entry = (await requireManifest(env, workspaceId, treeHash)).files.find((f) => f.path === "SKILL.md");
  const obj = entry ? await readBlob(env, workspaceId, entry.sha256) : null;
  return obj ? await obj.text() : null;
}

export async function draftSensitiveItems(env: Env, workspaceId: string, draft: DraftRow): Promise<SensitiveItem[]> {
  const db = makeDb(env.DB);
  const skill = await getSkill(db, workspaceId, draft.skillName);
  const current = skill ? await getVersion(db, workspaceId, draft.skillName, skill.currentVersionNo) : undefined;
  const draftMd = (await skillMdText(env, workspaceId, draft.treeHash)) ?? "";
  const currentMd = current ? await skillMdText(env, workspaceId, current.treeHash) : null;
  const report = draft.mergeReport ? (JSON.parse(draft.mergeReport) as { preservation?: PreservationReport | null }) : null;
  return sensitiveChanges(currentMd, draftMd, report?.preservation ?? null);
}
