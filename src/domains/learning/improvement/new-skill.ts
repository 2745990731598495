/**
 * New-skill candidates (docs/learning.md, "New-skill candidates"): successful runs that activated no
 * skill, grouped by the similarity of their user messages (similarity.ts); a group of at least
 * `min_runs` is a recurring pattern worth asking the auxiliary model about, recorded as a `new_skill`
 * candidate with those runs as evidence. Deterministic and idempotent: the id hashes the sorted run
 * ids, the insert does nothing on conflict, and a run that is already evidence of a new-skill
 * candidate is never grouped again, so the same evidence never makes two candidates. Runs under the
 * workspace lock (op `propose_new_skills`), like the improvement detection.
 */
import { sha256Hex } from "../../../kernel/hash.ts";
import type { Env } from "../../../storage/env.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { learningConfigOf } from "../config.ts";
import { clusterBySimilarity, termsOf } from "./similarity.ts";
import { insertEvidenceCandidate } from "./insert-candidate.ts";

export const NEW_SKILL_KIND = "new_skill";
/** Runs named in one candidate's evidence (the newest of the group). */
export const MAX_EVIDENCE_RUNS = 10;

export interface NewSkillEvidence {
  /** The group's runs, sorted by id. */
  runs: string[];
  /** The content terms the group's messages share. */
  terms: string[];
  /** How many runs without a skill were looked at, and the threshold. */
  considered: number;
  threshold: { window_runs: number; min_runs: number };
}

export interface UnskilledRun {
  runId: string;
  prompt: string;
}

/** The groups worth a candidate, from runs oldest first (so a group's seed is its first run). Pure. */
export function newSkillEvidence(runs: readonly UnskilledRun[], t: { window_runs: number; min_runs: number }): NewSkillEvidence[] {
  const clusters = clusterBySimilarity(runs.map((r) => ({ runId: r.runId, terms: termsOf(r.prompt) })));
  return clusters
    .filter((c) => c.members.length >= t.min_runs)
    .map((c) => ({
      runs: c.members
        .slice(-MAX_EVIDENCE_RUNS)
        .map((m) => m.runId)
        .sort(),
      terms: c.terms,
      considered: runs.length,
      threshold: { window_runs: t.window_runs, min_runs: t.min_runs },
    }));
}

export async function newSkillCandidateId(runs: readonly string[]): Promise<string> {
  return `new_${(await sha256Hex(`new_skill\n${runs.join(",")}`)).slice(0, 32)}`;
}

/** One workspace's pass; returns the ids of the candidates it recorded. */
export async function proposeNewSkills(env: Env, workspaceId: string, now: number): Promise<string[]> {
  const config = learningConfigOf(await loadConfig(env, workspaceId)).new_skill;
  if (!config.enabled) return [];
  const db = makeDb(env.DB);
  const used = new Set<string>();
  const earlier = await env.DB.prepare("SELECT evidence FROM learning_candidates WHERE workspace_id = ? AND kind = ?")
    .bind(workspaceId, NEW_SKILL_KIND)
    .all<{ evidence: string }>();
  for (const c of earlier.results) for (const r of (JSON.parse(c.evidence) as NewSkillEvidence).runs) used.add(r);
  // Successful runs without a skill and not rated down, newest first; each with its first user message.
  // The window is cut first, so only its runs look their message up, and by the (session, run) index:
  // SQLite otherwise walks the whole session by seq for every run (quadratic in a long session;
  // `npm run bench -- learning-job`, docs/learning.md "Cost").
  const { results } = await env.DB.prepare(
    `SELECT x.runId AS runId,
            (SELECT e.payload FROM session_events e INDEXED BY session_events_session_run_idx
              WHERE e.session_id = x.sessionId AND e.run_id = x.runId AND e.type = 'message'
              ORDER BY e.seq LIMIT 1) AS payload
       FROM (SELECT r.run_id AS runId, r.session_id AS sessionId, r.ended_at AS endedAt
               FROM run_receipts r
               LEFT JOIN run_feedback f ON f.run_id = r.run_id
              WHERE r.workspace_id = ?1 AND r.outcome = 'success' AND (f.rating IS NULL OR f.rating = 'up')
                AND NOT EXISTS (SELECT 1 FROM run_receipt_skills k WHERE k.run_id = r.run_id)
              ORDER BY r.ended_at DESC, r.run_id DESC
              LIMIT ?2) x
      ORDER BY x.endedAt DESC, x.runId DESC`,
  )
    .bind(workspaceId, config.window_runs)
    .all<{ runId: string; payload: string | null }>();
  const runs: UnskilledRun[] = [];
  for (const row of results.reverse()) {
    if (used.has(row.runId) || !row.payload) continue;
    const message = (JSON.parse(row.payload) as { message?: { role?: unknown; content?: unknown } }).message;
    if (message?.role === "user" && typeof message.content === "string") runs.push({ runId: row.runId, prompt: message.content });
  }
  const recorded: string[] = [];
  for (const evidence of newSkillEvidence(runs, config)) {
    const id = await newSkillCandidateId(evidence.runs);
    // Named by the draft (the author names the skill); empty until then.
    if (await insertEvidenceCandidate(db, { workspaceId, id, kind: NEW_SKILL_KIND, skillName: "", evidence, now })) recorded.push(id);
  }
  return recorded;
}
