/**
 * The local version's evidence for a SKILL.md merge (docs/learning.md, "Merge record"): the runs of the
 * local version where its learned lines mattered — runs that activated the skill at that version,
 * succeeded or were rated up, and whose transcript uses a learned line's words (the similarity test of
 * improvement/similarity.ts) — so the merge model sees that a local rule earned its place before it
 * decides a conflict over it. Bounded: 20 runs read, 5 shown, 1,500 characters each. The resolver is
 * wrapped so only SKILL.md requests carry it.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import type { HunkResolver } from "./hunk-resolver.ts";
import { loadEvidenceRuns } from "./improvement/evidence.ts";
import { sharedTerms, termsOf } from "./improvement/similarity.ts";

const RUNS_READ = 20;
const RUNS_SHOWN = 5;
const RUN_CHARS = 1_500;

export interface LocalEvidence {
  runs: { run_id: string; outcome: string; rating: string | null; lines: string[] }[];
  text: string;
}

export async function localVersionEvidence(
  env: Env,
  workspaceId: string,
  skill: string,
  version: string,
  learnedLines: readonly string[],
): Promise<LocalEvidence | null> {
  if (learnedLines.length === 0) return null;
  const { results } = await env.DB.prepare(
    `SELECT r.run_id AS run_id FROM run_receipt_skills k
       JOIN run_receipts r ON r.run_id = k.run_id
       LEFT JOIN run_feedback f ON f.run_id = r.run_id
      WHERE k.workspace_id = ?1 AND k.skill_name = ?2 AND k.version = ?3
        AND (r.outcome = 'success' OR f.rating = 'up') AND coalesce(f.rating, '') != 'down'
      ORDER BY r.ended_at DESC LIMIT ?4`,
  )
    .bind(workspaceId, skill, version, RUNS_READ)
    .all<{ run_id: string }>();
  const runs = await loadEvidenceRuns(
    makeDb(env.DB),
    workspaceId,
    results.map((r) => r.run_id),
  );
  const lines = learnedLines.map((text) => ({ text, terms: termsOf(text) }));
  const mattered: LocalEvidence["runs"] = [];
  const parts: string[] = [];
  for (const r of runs) {
    if (mattered.length >= RUNS_SHOWN) break;
    const terms = termsOf(r.transcript);
    const used = lines.filter((l) => sharedTerms(l.terms, terms) !== null);
    if (used.length === 0) continue;
    mattered.push({ run_id: r.run_id, outcome: r.outcome, rating: r.rating, lines: used.map((l) => l.text) });
    parts.push(
      `Run ${r.run_id} (${r.outcome}${r.rating ? `, rated ${r.rating}` : ""}) used: ${used.map((l) => l.text).join(" | ")}\n${r.transcript.slice(0, RUN_CHARS)}`,
    );
  }
  if (mattered.length === 0) return null;
  return { runs: mattered, text: parts.join("\n\n") };
}

/** The resolver with the local version's evidence added to its SKILL.md requests. */
export function withLocalEvidence(resolver: HunkResolver, evidence: LocalEvidence | null): HunkResolver {
  if (!evidence) return resolver;
  return {
    label: resolver.label,
    resolve: (request, signal) =>
      resolver.resolve(request.file.startsWith("SKILL.md") ? { ...request, localEvidence: evidence.text } : request, signal),
  };
}
