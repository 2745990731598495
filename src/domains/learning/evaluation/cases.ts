/**
 * Evaluation cases (docs/evaluation.md, "Cases"): `evals/cases.jsonl` in a skill's files — one JSON
 * object `{ "prompt", "expect"? }` per line, blank lines allowed — and user turns of recorded sessions.
 * Pure: text in, cases out; a bad line is a `validation_failed` naming the line.
 */
import { z } from "zod";
import { AppError } from "../../../kernel/errors.ts";

/** Where the cases file lives in a skill's tree. */
export const CASES_PATH = "evals/cases.jsonl";
/** Limits on the cases file and each case (docs/evaluation.md). */
export const MAX_CASES_FILE_BYTES = 256 * 1024;
export const MAX_CASES = 50;
export const MAX_PROMPT_CHARS = 8_000;
export const MAX_EXPECT_CHARS = 4_000;

export const CaseLine = z.strictObject({
  prompt: z.string().trim().min(1).max(MAX_PROMPT_CHARS),
  expect: z.string().trim().min(1).max(MAX_EXPECT_CHARS).optional(),
});

export type CaseSource = "cases_file" | "recorded_session";

export interface EvalCase {
  source: CaseSource;
  prompt: string;
  expect?: string;
  /** For a recorded case: the session and run whose user turn it replays. */
  origin?: { session_id: string; run_id: string };
}

/** Parses a cases file; throws `validation_failed` (with `details.line`) on the first bad line. */
export function parseCasesJsonl(text: string): EvalCase[] {
  const bytes = new TextEncoder().encode(text).byteLength;
  if (bytes > MAX_CASES_FILE_BYTES)
    throw new AppError("validation_failed", `${CASES_PATH} is ${bytes} bytes; the limit is ${MAX_CASES_FILE_BYTES}`, {
      details: { path: CASES_PATH, limit_bytes: MAX_CASES_FILE_BYTES },
    });
  const out: EvalCase[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const where = `${CASES_PATH} line ${i + 1}`;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw new AppError("validation_failed", `${where}: not valid JSON (${e instanceof Error ? e.message : String(e)})`, {
        details: { path: CASES_PATH, line: i + 1 },
      });
    }
    const parsed = CaseLine.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
      throw new AppError("validation_failed", `${where}: ${field}${issue.message}`, { details: { path: CASES_PATH, line: i + 1 } });
    }
    if (out.length >= MAX_CASES)
      throw new AppError("validation_failed", `${where}: more than ${MAX_CASES} cases`, {
        details: { path: CASES_PATH, line: i + 1, limit: MAX_CASES },
      });
    out.push({ source: "cases_file", prompt: parsed.data.prompt, ...(parsed.data.expect ? { expect: parsed.data.expect } : {}) });
  }
  return out;
}

/**
 * The cases of one evaluation: the file's first, then recorded turns whose prompt the file does not
 * already hold (the same prompt twice would only cost twice), capped at `MAX_CASES` in all.
 */
export function combineCases(fromFile: readonly EvalCase[], recorded: readonly EvalCase[]): EvalCase[] {
  const seen = new Set(fromFile.map((c) => c.prompt));
  const out = [...fromFile];
  for (const c of recorded) {
    if (out.length >= MAX_CASES) break;
    const prompt = c.prompt.slice(0, MAX_PROMPT_CHARS).trim();
    if (prompt === "" || seen.has(prompt)) continue;
    seen.add(prompt);
    out.push({ ...c, prompt });
  }
  return out.slice(0, MAX_CASES);
}
