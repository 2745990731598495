/** D1 access for learning candidates and drafts (rows change only under the workspace lock). */
import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../storage/db/client.ts";
import { learningCandidates, skillDrafts } from "../../storage/db/schema.ts";

export type CandidateRow = typeof learningCandidates.$inferSelect;
export type DraftRow = typeof skillDrafts.$inferSelect;

/** Drafts still under review: they hold the skill ("another active draft"). */
export const ACTIVE_DRAFT_STATUSES = ["pending_review"] as const;

export async function getCandidate(db: Db, workspaceId: string, id: string): Promise<CandidateRow | undefined> {
  return db
    .select()
    .from(learningCandidates)
    .where(and(eq(learningCandidates.workspaceId, workspaceId), eq(learningCandidates.id, id)))
    .get();
}

export async function listCandidates(db: Db, workspaceId: string, skillName?: string): Promise<CandidateRow[]> {
  const where =
    skillName === undefined
      ? eq(learningCandidates.workspaceId, workspaceId)
      : and(eq(learningCandidates.workspaceId, workspaceId), eq(learningCandidates.skillName, skillName));
  return db.select().from(learningCandidates).where(where).orderBy(learningCandidates.createdAt, learningCandidates.id).all();
}

export async function getDraft(db: Db, workspaceId: string, id: string): Promise<DraftRow | undefined> {
  return db
    .select()
    .from(skillDrafts)
    .where(and(eq(skillDrafts.workspaceId, workspaceId), eq(skillDrafts.id, id)))
    .get();
}

export async function listDrafts(db: Db, workspaceId: string, skillName?: string): Promise<DraftRow[]> {
  const where =
    skillName === undefined
      ? eq(skillDrafts.workspaceId, workspaceId)
      : and(eq(skillDrafts.workspaceId, workspaceId), eq(skillDrafts.skillName, skillName));
  return db.select().from(skillDrafts).where(where).orderBy(skillDrafts.createdAt, skillDrafts.id).all();
}

/**
 * An active draft of `skillName` that belongs to none of `candidateIds` (the candidate itself and
 * any it is superseding in the same batch); when there is one, the candidate has to wait.
 */
export async function otherActiveDraft(
  db: Db,
  workspaceId: string,
  skillName: string,
  candidateIds: readonly string[],
): Promise<DraftRow | undefined> {
  const rows = await db
    .select()
    .from(skillDrafts)
    .where(
      and(
        eq(skillDrafts.workspaceId, workspaceId),
        eq(skillDrafts.skillName, skillName),
        inArray(skillDrafts.status, [...ACTIVE_DRAFT_STATUSES]),
      ),
    )
    .all();
  return rows.find((d) => d.candidateId === null || !candidateIds.includes(d.candidateId));
}

export function updateCandidate(
  db: Db,
  workspaceId: string,
  id: string,
  set: Partial<Omit<CandidateRow, "workspaceId" | "id">>,
  now: number,
) {
  return db
    .update(learningCandidates)
    .set({ ...set, updatedAt: now })
    .where(and(eq(learningCandidates.workspaceId, workspaceId), eq(learningCandidates.id, id)));
}

export function updateDraft(db: Db, workspaceId: string, id: string, set: Partial<Omit<DraftRow, "workspaceId" | "id">>, now: number) {
  return db
    .update(skillDrafts)
    .set({ ...set, updatedAt: now })
    .where(and(eq(skillDrafts.workspaceId, workspaceId), eq(skillDrafts.id, id)));
}

/** Mark the candidate's drafts under review superseded (they can no longer be published); decided drafts keep their decision. */
export function supersedeDraftsOf(db: Db, workspaceId: string, candidateId: string, now: number) {
  return db
    .update(skillDrafts)
    .set({ status: "superseded", updatedAt: now })
    .where(
      and(
        eq(skillDrafts.workspaceId, workspaceId),
        eq(skillDrafts.candidateId, candidateId),
        inArray(skillDrafts.status, [...ACTIVE_DRAFT_STATUSES]),
      ),
    );
}
