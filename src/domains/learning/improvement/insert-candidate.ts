/**
 * Recording one evidence candidate (docs/learning.md, "Improvement candidates", "New-skill
 * candidates"): a `pending` row whose id is derived from its evidence, inserted only if absent, so the
 * same evidence never makes two candidates. Shared by both detections (job.ts, new-skill.ts).
 */
import type { Db } from "../../../storage/db/client.ts";
import { learningCandidates } from "../../../storage/db/schema.ts";

export async function insertEvidenceCandidate(
  db: Db,
  c: { workspaceId: string; id: string; kind: string; skillName: string; evidence: unknown; now: number },
): Promise<boolean> {
  const inserted = await db
    .insert(learningCandidates)
    .values({
      workspaceId: c.workspaceId,
      id: c.id,
      kind: c.kind,
      skillName: c.skillName,
      pluginId: null,
      status: "pending",
      mergeMode: null,
      evidence: JSON.stringify(c.evidence),
      mergePlan: null,
      draftId: null,
      supersededBy: null,
      blockedByDraftId: null,
      createdAt: c.now,
      updatedAt: c.now,
    })
    .onConflictDoNothing()
    .returning({ id: learningCandidates.id });
  return inserted.length > 0;
}
