/**
 * The publish gates (src/domains/learning/gates.ts) in order, for a manual approval and for automatic
 * publishing, and `onEvaluationFinished`: a passed verdict auto-publishes only when the workspace
 * turned `learning.auto_publish` on and the draft clears the confidence threshold.
 */
import { describe, expect, it } from "vitest";
import { sectionText, sensitiveChanges } from "../../../src/domains/learning/sensitive-changes.ts";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { decideGates, type GateInput } from "../../../src/domains/learning/gates.ts";
import { onEvaluationFinished } from "../../../src/domains/governance/learning-drafts.ts";

const input = (over: Partial<GateInput> = {}): GateInput => ({
  mode: "manual",
  draftStatus: "pending_review",
  safetyLevel: "pass",
  blockedConflicts: false,
  evaluation: "passed",
  confidence: 0.9,
  lostLocal: 0,
  skipEvaluation: null,
  autoPublish: { enabled: true, min_confidence: 0.8 },
  ...over,
});
const gateOf = (over: Partial<GateInput>) => decideGates(input(over)).refusal;

describe("decideGates", () => {
  it("checks draft, safety, supporting files, evaluation, confidence and review in that order", () => {
    const d = decideGates(input());
    expect(d.publish).toBe(true);
    expect(d.steps.map((s) => s.gate)).toEqual([
      "draft",
      "safety",
      "supporting_files",
      "acknowledgements",
      "evaluation",
      "confidence",
      "preservation",
      "review",
    ]);
    // The first failing gate is the one reported, even when later ones fail too.
    expect(gateOf({ safetyLevel: "critical", evaluation: "failed" })).toMatchObject({ gate: "safety", code: "unprocessable" });
    expect(gateOf({ draftStatus: "published", safetyLevel: "fail" })).toMatchObject({ gate: "draft", code: "conflict" });
    expect(gateOf({ safetyLevel: "warn", blockedConflicts: true })).toMatchObject({ gate: "supporting_files" });
  });

  it("manual approval: running, failed and cancelled evaluations block; none needs a reasoned skip", () => {
    for (const evaluation of ["running", "failed", "cancelled"] as const)
      expect(gateOf({ evaluation, skipEvaluation: { reason: "r" } })).toMatchObject({ gate: "evaluation", code: "conflict" });
    expect(gateOf({ evaluation: "none" })).toMatchObject({ gate: "evaluation", code: "evaluation_required" });
    const skipped = decideGates(input({ evaluation: "none", skipEvaluation: { reason: "hotfix" } }));
    expect(skipped.publish).toBe(true);
    expect(skipped.steps.find((s) => s.gate === "evaluation")).toMatchObject({
      status: "skipped",
      message: expect.stringContaining("hotfix"),
    });
    // Low confidence and lost learnings are shown to the reviewer, who decides.
    expect(decideGates(input({ confidence: 0.2, lostLocal: 2 })).publish).toBe(true);
  });

  it("automatic publishing: only when enabled, with a passed evaluation, enough confidence and nothing lost", () => {
    const auto = (over: Partial<GateInput>) => decideGates(input({ mode: "auto", ...over }));
    expect(auto({}).publish).toBe(true);
    expect(auto({ confidence: null }).publish).toBe(true);
    expect(auto({ autoPublish: { enabled: false, min_confidence: 0.8 } }).refusal).toMatchObject({ gate: "review" });
    expect(auto({ evaluation: "none", skipEvaluation: { reason: "r" } }).refusal).toMatchObject({
      gate: "evaluation",
      code: "evaluation_required",
    });
    expect(auto({ confidence: 0.79 }).refusal).toMatchObject({ gate: "confidence" });
    expect(auto({ confidence: 0.8 }).publish).toBe(true);
    expect(auto({ lostLocal: 1 }).refusal).toMatchObject({ gate: "preservation" });
  });
});

describe("onEvaluationFinished", () => {
  it("auto-publishes a passed draft only when the workspace turned it on", async () => {
    const ws = await newWorkspace();
    const put = (query: string, description: string) =>
      call("PUT", `/api/skills/notes${query}`, {
        token: ws.member,
        body: { files: [{ path: "SKILL.md", content: skillMd("notes", description) }] },
      });
    expect((await put("", "Takes notes.")).status).toBe(200);
    const draft = await json<{ draft_id: string }>(await put("?draft=true", "Takes better notes."));

    const off = await onEvaluationFinished(env, ws.id, draft.draft_id, "passed");
    expect(off.published).toBeNull();
    expect(off.gates.refusal).toMatchObject({ gate: "review" });

    const config = { learning: { auto_publish: { enabled: true, min_confidence: 0.5 } } };
    expect((await call("PUT", "/api/config", { token: ws.admin, body: config })).status).toBe(200);
    expect((await onEvaluationFinished(env, ws.id, draft.draft_id, "failed")).published).toBeNull();
    const on = await onEvaluationFinished(env, ws.id, draft.draft_id, "passed");
    expect(on.published).toMatchObject({ version: "v0002" });
    const v = await json<{ provenance: Record<string, unknown> }>(
      await call("GET", "/api/skills/notes/versions/v0002", { token: ws.read }),
    );
    expect(v.provenance).toMatchObject({
      kind: "upload_draft",
      review: { mode: "auto", approved_by: "learning:auto_publish", evaluation: "passed" },
    });
    // A second verdict for the same draft publishes nothing more.
    expect((await onEvaluationFinished(env, ws.id, draft.draft_id, "passed")).gates.refusal).toMatchObject({ gate: "draft" });
  });

  it("rejects an unknown learning config key", async () => {
    const ws = await newWorkspace();
    const res = await call("PUT", "/api/config", {
      token: ws.admin,
      body: { learning: { auto_publish: { enabled: true, threshold: 1 } } },
    });
    expect(res.status).toBe(400);
  });

  it("auto-publish never publishes plugin updates; sensitive changes need each acknowledgement; a regression needs an admin and a reason", () => {
    const auto = { mode: "auto" as const, evaluation: "passed" as const, autoPublish: { enabled: true, min_confidence: 0.8 } };
    expect(gateOf({ ...auto, proposalKind: "plugin_skill_update" })).toMatchObject({ gate: "review", code: "conflict" });
    expect(gateOf({ ...auto, proposalKind: "skill_improvement" })).toBeNull();

    const sensitive = [
      { id: "dropped_upstream:0", kind: "dropped_upstream" as const, message: "drops x" },
      { id: "section:safety", kind: "safety_section" as const, message: "changes Safety" },
    ];
    expect(gateOf({ sensitive })).toMatchObject({ gate: "acknowledgements", code: "conflict" });
    expect(gateOf({ sensitive, acknowledged: ["section:safety"] })!.message).toContain('"dropped_upstream:0"');
    expect(gateOf({ sensitive, acknowledged: ["section:safety", "dropped_upstream:0"] })).toBeNull();
    expect(gateOf({ ...auto, sensitive, acknowledged: ["section:safety", "dropped_upstream:0"] })).toMatchObject({
      gate: "acknowledgements",
    });

    expect(gateOf({ evaluation: "failed" })).toMatchObject({ gate: "evaluation", code: "conflict" });
    expect(gateOf({ evaluation: "failed", overrideRegression: { reason: "judge is wrong" } })).toMatchObject({ code: "forbidden" });
    const over = decideGates(input({ evaluation: "failed", overrideRegression: { reason: "judge is wrong" }, isAdmin: true }));
    expect(over.publish).toBe(true);
    expect(over.steps.find((s) => s.gate === "evaluation")).toMatchObject({
      status: "skipped",
      message: expect.stringContaining("judge is wrong"),
    });
  });
});

describe("sensitive changes", () => {
  it("lists dropped upstream additions and changed Safety / Required Tools sections", () => {
    const cur = "# Steps\n\n1. Go.\n\n## Safety\n\nNever delete files.\n\n## Notes\n\nx\n";
    expect(sensitiveChanges(cur, cur, null)).toEqual([]);
    expect(sensitiveChanges(cur, cur.replace("Never delete files.", "Delete files when asked."), null).map((i) => i.id)).toEqual([
      "section:safety",
    ]);
    expect(sensitiveChanges(cur, `${cur}\n## Required tools\n\n- shell\n`, null).map((i) => i.message)).toEqual([
      "the draft adds the Required Tools section",
    ]);
    const report = {
      local: [],
      upstream: [{ kind: "rule" as const, text: "- a", kept: "lost" as const }],
      lost_local: 0,
      lost_upstream: 1,
    };
    expect(sensitiveChanges(cur, cur.replace("Notes", "Notes\n\nmore"), report).map((i) => i.id)).toEqual(["dropped_upstream:0"]);
    expect(sectionText(cur, /^notes\b/i)).toBe("## Notes\n\nx");
  });
});
