/**
 * Recording an evidence candidate's synthesis under the workspace lock (docs/learning.md, "From
 * candidate to draft"). It re-checks what the synthesis was made against — the candidate still
 * `pending`, the skill still at the same version (an improvement) or still absent (a new skill), no
 * other draft of the skill under review — and writes the draft and the candidate in one D1 batch.
 * A skill that moved on supersedes the candidate (its evidence was about an older version).
 */
import type { Env } from "../../../storage/env.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { skillDrafts } from "../../../storage/db/schema.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { newId } from "../../../kernel/ids.ts";
import { runBatch, type Statement } from "../../skills/batch.ts";
import { getSkill, getVersion } from "../../skills/store.ts";
import { getCandidate, otherActiveDraft, updateCandidate } from "../../skills/candidate-store.ts";
import type { EvidenceDraft } from "./synthesize.ts";

export interface RecordedEvidenceDraft {
  candidateId: string;
  /** null when nothing was drafted (superseded, or a new skill whose synthesis failed). */
  draftId: string | null;
  status: "pending_review" | "merge_failed" | "synthesis_failed" | "superseded";
}

export async function recordEvidenceDraft(
  env: Env,
  workspaceId: string,
  drafted: EvidenceDraft,
  actor: string,
): Promise<RecordedEvidenceDraft> {
  const db = makeDb(env.DB);
  const candidate = await getCandidate(db, workspaceId, drafted.candidateId);
  if (!candidate) throw notFound(`Candidate '${drafted.candidateId}'`);
  if (candidate.status !== "pending")
    throw new AppError("conflict", `Candidate '${candidate.id}' is ${candidate.status}; it was drafted meanwhile`);
  const now = Date.now();
  const skill = await getSkill(db, workspaceId, drafted.skillName);
  const current = skill ? await getVersion(db, workspaceId, drafted.skillName, skill.currentVersionNo) : undefined;
  if ((current?.treeHash ?? null) !== drafted.localTreeHash) {
    await runBatch(db, [updateCandidate(db, workspaceId, candidate.id, { status: "superseded" }, now)]);
    return { candidateId: candidate.id, draftId: null, status: "superseded" };
  }
  const blocker = await otherActiveDraft(db, workspaceId, drafted.skillName, [candidate.id]);
  if (blocker) throw new AppError("conflict", `Skill '${drafted.skillName}' has another draft under review ('${blocker.id}')`);
  const statements: Statement[] = [];
  let draftId: string | null = null;
  // A failed synthesis of an improvement keeps its reason in a `merge_failed` draft over the current tree;
  // a new skill has no tree to show, so only its candidate says it failed.
  if (drafted.treeHash !== null && (drafted.status === "pending_review" || drafted.localTreeHash !== null)) {
    draftId = newId("drf");
    const failedDraft = drafted.status === "failed";
    statements.push(
      db.insert(skillDrafts).values({
        workspaceId,
        id: draftId,
        skillName: drafted.skillName,
        candidateId: candidate.id,
        proposalKind: drafted.kind,
        treeHash: drafted.treeHash,
        contentHash: drafted.contentHash ?? current?.contentHash ?? "",
        frontmatter: JSON.stringify(drafted.frontmatter ?? (current ? JSON.parse(current.frontmatter) : {})),
        provenance: JSON.stringify({ ...drafted.provenance, draft_id: draftId, actor }),
        safety: JSON.stringify(drafted.safety ?? (current ? JSON.parse(current.safety) : { level: "pass", findings: [] })),
        status: failedDraft ? "merge_failed" : "pending_review",
        failure: drafted.failure,
        createdAt: now,
        updatedAt: now,
      }),
    );
  }
  statements.push(
    updateCandidate(
      db,
      workspaceId,
      candidate.id,
      {
        status: drafted.status === "pending_review" ? "drafted" : "synthesis_failed",
        draftId,
        // A new skill's candidate is named once its draft names the skill.
        skillName: drafted.skillName,
        blockedByDraftId: null,
      },
      now,
    ),
  );
  await runBatch(db, statements);
  const status = drafted.status === "pending_review" ? "pending_review" : draftId ? "merge_failed" : "synthesis_failed";
  return { candidateId: candidate.id, draftId, status };
}
