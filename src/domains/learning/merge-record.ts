/**
 * The merge record of a three-way SKILL.md merge (docs/learning.md, "Merge record"): for each change
 * between the local version and the new upstream — a local learning (in L, not in B) or an upstream
 * addition (in U, not in B) — what the merge did with it: `preserved` (a local change kept),
 * `adopted` (an upstream change taken) or `dropped` (either one lost), with a `change_reason`: the
 * resolver's reason when a conflict hunk decided it, else the line merge's rule. Pure: built from the
 * preservation report and the merge decisions.
 */
import type { PreservationReport, Kept, UnitKind } from "./preservation.ts";
import type { MergeDecision } from "./skill-merge.ts";

export type ChangeLabel = "preserved" | "adopted" | "dropped";

export interface MergeChange {
  side: "local" | "upstream";
  kind: UnitKind;
  text: string;
  label: ChangeLabel;
  kept: Kept;
  change_reason: string;
  /** The conflict hunk that decided it (file and hunk id), when one did. */
  hunk: { file: string; hunk: number; decision: string } | null;
}

const REASON_CHARS = 600;

export function mergeRecord(preservation: PreservationReport | null, decisions: readonly MergeDecision[]): MergeChange[] {
  if (!preservation) return [];
  const out: MergeChange[] = [];
  for (const side of ["local", "upstream"] as const) {
    for (const u of preservation[side]) {
      const line = u.text.trim();
      const d = decisions.find((x) => x.file === "SKILL.md" && (side === "local" ? x.local : x.upstream).includes(line));
      const label: ChangeLabel = u.kept === "lost" ? "dropped" : side === "local" ? "preserved" : "adopted";
      out.push({
        side,
        kind: u.kind,
        text: u.text,
        label,
        kept: u.kept,
        change_reason: (d ? `${d.decision} (${d.by}): ${d.reason}` : ruleReason(side, u.kept)).slice(0, REASON_CHARS),
        hunk: d ? { file: d.file, hunk: d.hunk, decision: d.decision } : null,
      });
    }
  }
  return out;
}

function ruleReason(side: "local" | "upstream", kept: Kept): string {
  const other = side === "local" ? "upstream" : "the local version";
  if (kept === "lost") return `the line merge took ${other}'s text for this region, which does not have it`;
  return `only ${side === "local" ? "the local version" : "upstream"} changed this region: the line merge kept it${kept === "reworded" ? " (reworded)" : ""}`;
}
