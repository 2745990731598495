/**
 * Support for evaluation tests: a skill draft made the way production makes one — a plugin whose new
 * upstream only changes the skill (a fast-forward update), synced into a `pending_review` draft —
 * whose SKILL.md bodies carry markers, so a scripted model can tell the baseline arm from the
 * candidate arm by its system prompt, and whose `evals/cases.jsonl` holds `n` cases.
 */
import { call, json, type TestWorkspace } from "./api.ts";
import { skillMd } from "../fixtures/skills/bundles.ts";
import { candidates, pluginPackage, post, uploadPackage } from "./plugins.ts";

export const BASELINE_MARK = "BASELINE-MARK-7f3";
export const CANDIDATE_MARK = "CANDIDATE-MARK-9c1";
export const SKILL = "greeter";

export const casesJsonl = (n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ prompt: `Greet person ${i}`, expect: `mentions person ${i}` })).join("\n");

/** A pending_review draft of `greeter` with `cases` cases in its evals/cases.jsonl; returns the draft id. */
export async function draftWithCases(ws: TestWorkspace, cases: number): Promise<string> {
  const v1 = { "SKILL.md": skillMd(SKILL, "Greets people by name.", `# Greeting\n\n${BASELINE_MARK}: say hello.\n`) };
  const v2 = {
    "SKILL.md": skillMd(SKILL, "Greets people by name.", `# Greeting\n\n${CANDIDATE_MARK}: say hello and use the name.\n`),
    "evals/cases.jsonl": casesJsonl(cases),
  };
  expect200(await uploadPackage(ws.admin, await pluginPackage("evalkit", "1.0.0", { [SKILL]: v1 })), "upload 1.0.0");
  expect200(await post(ws.admin, "/api/plugins/evalkit/enable"), "enable");
  expect200(await uploadPackage(ws.admin, await pluginPackage("evalkit", "1.1.0", { [SKILL]: v2 })), "upload 1.1.0");
  expect200(await post(ws.admin, "/api/plugins/sync"), "sync");
  const draft = (await candidates(ws.read, SKILL)).drafts.find((d) => d.status === "pending_review");
  if (!draft) throw new Error("no pending_review draft after sync");
  return draft.id;
}

function expect200(res: { status: number; body: unknown }, what: string): void {
  if (res.status !== 200 && res.status !== 201) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Which arm a run's system prompt belongs to (by the activated SKILL.md's marker). */
export function armOfPrompt(promptJson: string): "baseline" | "candidate" | "none" {
  if (promptJson.includes(CANDIDATE_MARK)) return "candidate";
  if (promptJson.includes(BASELINE_MARK)) return "baseline";
  return "none";
}

export interface EvaluationJson {
  id: string;
  status: string;
  concurrency: number;
  progress: { total: number; finished: number; running: number; pending: number };
  cases: {
    index: number;
    source: string;
    state: string;
    baseline_score: number | null;
    candidate_score: number | null;
    error: string | null;
  }[];
  report: {
    verdict: string;
    reasons: string[];
    summary: Record<string, number | null>;
    cases: {
      index: number;
      state: string;
      reason: string;
      baseline: { output: string; session_id: string } | null;
      candidate: { output: string } | null;
    }[];
    cost: { model_calls: number; judge_calls: number; total_tokens: number };
  } | null;
  version: number;
}

export async function evaluation(ws: TestWorkspace, draftId: string): Promise<EvaluationJson> {
  const res = await call("GET", `/api/drafts/${draftId}/evaluation`, { token: ws.read });
  if (res.status !== 200) throw new Error(`evaluation: ${res.status} ${await res.text()}`);
  return json<EvaluationJson>(res);
}
