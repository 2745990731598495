/**
 * The publish gates of a draft, in order (docs/learning.md, "Gates"): the draft is still under
 * review → static safety (fail/critical blocks) → no unresolved supporting-file conflicts → the
 * evaluation verdict → the confidence gate (and, for automatic publishing, no lost local learning) →
 * review → publish. One pure function decides both a manual approval and automatic publishing, so the
 * two can never disagree about what a gate means. Rollback after a publish is the skills' own.
 */
import type { SafetyLevel } from "../skills/safety.ts";
import { blocksPublication } from "../skills/safety.ts";
import type { ErrorCode } from "../../kernel/errors.ts";
import type { SensitiveItem } from "./sensitive-changes.ts";

export const EVALUATION_VERDICTS = ["none", "running", "passed", "failed", "cancelled"] as const;
export type EvaluationVerdict = (typeof EVALUATION_VERDICTS)[number];

export type GateName =
  "draft" | "safety" | "supporting_files" | "acknowledgements" | "evaluation" | "confidence" | "preservation" | "review";
export type GateStatus = "passed" | "blocked" | "skipped";

export interface GateStep {
  gate: GateName;
  status: GateStatus;
  message: string;
}

export interface GateInput {
  /** `manual`: someone approves; `auto`: the workspace's auto-publish setting decides. */
  mode: "manual" | "auto";
  draftStatus: string;
  safetyLevel: SafetyLevel;
  /** The supporting-file merge plan has unresolved conflicts. */
  blockedConflicts: boolean;
  evaluation: EvaluationVerdict;
  /** The merge's confidence; null for drafts no merge made (they count as 1). */
  confidence: number | null;
  /** Local learnings the merged text lost (preservation report). */
  lostLocal: number;
  /** Manual only: approve without an evaluation, with the reason recorded in provenance. */
  skipEvaluation: { reason: string } | null;
  autoPublish: { enabled: boolean; min_confidence: number };
  /** The draft's `proposal_kind`: automatic publishing never publishes a `plugin_skill_update`. */
  proposalKind?: string;
  /** Changes the reviewer must acknowledge one by one (sensitive-changes.ts), and the ids the approval acknowledged. */
  sensitive?: readonly SensitiveItem[];
  acknowledged?: readonly string[];
  /** Manual only: approve over a failed (regressed) evaluation; needs `isAdmin` and a reason, recorded. */
  overrideRegression?: { reason: string } | null;
  isAdmin?: boolean;
}

export interface GateRefusal {
  code: ErrorCode;
  gate: GateName;
  message: string;
}

export interface GateDecision {
  publish: boolean;
  steps: GateStep[];
  /** Why not (the first blocking gate), as the error a manual approval answers with. */
  refusal: GateRefusal | null;
}

export function decideGates(input: GateInput): GateDecision {
  const steps: GateStep[] = [];
  const block = (gate: GateName, code: ErrorCode, message: string): GateDecision => {
    steps.push({ gate, status: "blocked", message });
    return { publish: false, steps, refusal: { code, gate, message } };
  };
  const pass = (gate: GateName, message: string, status: GateStatus = "passed") => steps.push({ gate, status, message });

  if (input.mode === "auto" && !input.autoPublish.enabled)
    return block("review", "conflict", "automatic publishing is off for this workspace (learning.auto_publish.enabled)");
  if (input.mode === "auto" && input.proposalKind === "plugin_skill_update")
    return block("review", "conflict", "automatic publishing never publishes plugin updates: a reviewer approves them");
  if (input.draftStatus !== "pending_review") return block("draft", "conflict", `the draft is ${input.draftStatus}, not pending_review`);
  pass("draft", "pending review");

  if (blocksPublication(input.safetyLevel)) return block("safety", "unprocessable", `the safety check failed (${input.safetyLevel})`);
  pass("safety", `safety level ${input.safetyLevel}`);

  if (input.blockedConflicts) return block("supporting_files", "unprocessable", "the supporting-file merge plan has unresolved conflicts");
  pass("supporting_files", "no unresolved conflicts");

  const sensitive = input.sensitive ?? [];
  if (sensitive.length > 0) {
    if (input.mode === "auto")
      return block("acknowledgements", "conflict", `a reviewer must acknowledge: ${sensitive.map((i) => i.message).join("; ")}`);
    const acked = new Set(input.acknowledged ?? []);
    const missing = sensitive.filter((i) => !acked.has(i.id));
    if (missing.length > 0)
      return block(
        "acknowledgements",
        "conflict",
        `acknowledge each of these before approving (acknowledge: [${missing.map((i) => `"${i.id}"`).join(", ")}]): ${missing.map((i) => i.message).join("; ")}`,
      );
    pass("acknowledgements", `acknowledged by the approver: ${sensitive.map((i) => i.id).join(", ")}`);
  } else pass("acknowledgements", "nothing to acknowledge");

  switch (input.evaluation) {
    case "running":
      return block("evaluation", "conflict", "the evaluation is still running; wait for its verdict or cancel it");
    case "failed":
      if (input.mode === "manual" && input.overrideRegression) {
        if (!input.isAdmin) return block("evaluation", "forbidden", "approving over a failed evaluation needs the 'admin' scope");
        pass("evaluation", `failed; approved over the regression by an admin: ${input.overrideRegression.reason}`, "skipped");
        break;
      }
      return block(
        "evaluation",
        "conflict",
        'the evaluation failed: the draft scored worse than the current version (an admin may approve with { "override_regression": true, "reason": "…" })',
      );
    case "cancelled":
      return block("evaluation", "conflict", "the evaluation was cancelled; evaluate again");
    case "none":
      if (input.mode === "auto") return block("evaluation", "evaluation_required", "automatic publishing needs a passed evaluation");
      if (!input.skipEvaluation)
        return block(
          "evaluation",
          "evaluation_required",
          'the draft has no evaluation; evaluate it, or approve with { "skip_evaluation": true, "reason": "…" }',
        );
      pass("evaluation", `skipped by the approver: ${input.skipEvaluation.reason}`, "skipped");
      break;
    case "passed":
      pass("evaluation", "passed");
      break;
  }

  const confidence = input.confidence ?? 1;
  const threshold = input.autoPublish.min_confidence;
  if (input.mode === "auto") {
    if (confidence < threshold) return block("confidence", "conflict", `merge confidence ${confidence} is below ${threshold}`);
    pass("confidence", `merge confidence ${confidence} ≥ ${threshold}`);
    if (input.lostLocal > 0) return block("preservation", "conflict", `the merge lost ${input.lostLocal} local learning(s)`);
    pass("preservation", "every local learning kept");
    pass("review", "published automatically (learning.auto_publish)", "skipped");
  } else {
    // A person reviewing sees the confidence and the preservation report; they decide.
    pass(
      "confidence",
      `merge confidence ${confidence} (threshold ${threshold}; the reviewer decides)`,
      confidence < threshold ? "skipped" : "passed",
    );
    pass(
      "preservation",
      input.lostLocal > 0 ? `${input.lostLocal} local learning(s) lost; the reviewer decides` : "every local learning kept",
      input.lostLocal > 0 ? "skipped" : "passed",
    );
    pass("review", "approved");
  }
  return { publish: true, steps, refusal: null };
}
