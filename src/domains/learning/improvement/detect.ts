/**
 * Whether a skill version's recent runs call for an improvement candidate (docs/learning.md,
 * "Improvement candidates"), and the candidate's deterministic id. Pure: the job reads the receipts.
 * The id hashes the skill, its version and the sorted evidence run ids, so the same evidence can
 * never make two candidates, however often the job runs.
 */
import { sha256Hex } from "../../../kernel/hash.ts";
import type { LearningConfig } from "../config.ts";

export interface RecentRun {
  runId: string;
  /** success | failure | cancelled | pending (the receipt's outcome). */
  outcome: string;
  /** The effective rating: a person's, else the verification's. */
  rating: string | null;
}

export interface ImprovementEvidence {
  skill: string;
  version: string;
  /** The failed or down-rated runs, sorted by id. */
  runs: string[];
  /** How many decided runs were looked at, and the share of them that were bad. */
  considered: number;
  bad_share: number;
  threshold: { window_runs: number; min_runs: number; bad_share: number };
}

const isBad = (r: RecentRun) => r.outcome === "failure" || r.rating === "down";
/** A run counts when it was decided: by its outcome, or by a rating (a cancelled run a person rated down). */
const isDecided = (r: RecentRun) => r.outcome === "success" || r.outcome === "failure" || r.rating !== null;

/** `recent` is newest first; only its first `window_runs` decided runs are looked at. */
export function improvementEvidence(
  skill: string,
  version: string,
  recent: RecentRun[],
  t: LearningConfig["improvement"],
): ImprovementEvidence | null {
  const window = recent.filter(isDecided).slice(0, t.window_runs);
  if (window.length < t.min_runs) return null;
  const bad = window.filter(isBad);
  const share = bad.length / window.length;
  if (bad.length === 0 || share < t.bad_share) return null;
  return {
    skill,
    version,
    runs: bad.map((r) => r.runId).sort(),
    considered: window.length,
    bad_share: Math.round(share * 1000) / 1000,
    threshold: { window_runs: t.window_runs, min_runs: t.min_runs, bad_share: t.bad_share },
  };
}

export async function improvementCandidateId(e: Pick<ImprovementEvidence, "skill" | "version" | "runs">): Promise<string> {
  return `imp_${(await sha256Hex(`${e.skill}\n${e.version}\n${e.runs.join(",")}`)).slice(0, 32)}`;
}
