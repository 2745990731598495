/**
 * Evidence runs as text for the auxiliary model (docs/learning.md, "From candidate to draft"): a run's
 * user input, what the assistant said and which tools it called with what result, its outcome and
 * the person's rating and comment. Pure: events in, bounded text out. Bounds keep one synthesis
 * request small whatever the runs held: each transcript and the whole set are cut with a marker.
 */
import type { Message } from "../../../runtime/index.ts";

/** Characters of one run's transcript, of all transcripts together, and of one message or tool result. */
export const TRANSCRIPT_LIMITS = { perRun: 4_000, total: 24_000, perMessage: 1_200, maxRuns: 8 } as const;

export interface EvidenceRun {
  run_id: string;
  session_id: string;
  /** The run's first user message (the input an evaluation replays); null when the log has none. */
  prompt: string | null;
  outcome: string;
  rating: string | null;
  comment: string | null;
  transcript: string;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}[…cut at ${n} characters]` : s);

/** The transcript of one run from its `message` events' messages, in log order. */
export function formatTranscript(messages: readonly Message[], limit = TRANSCRIPT_LIMITS.perRun): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "user") lines.push(`USER: ${clip(m.content, TRANSCRIPT_LIMITS.perMessage)}`);
    else if (m.role === "assistant") {
      if (m.text.trim() !== "") lines.push(`ASSISTANT: ${clip(m.text, TRANSCRIPT_LIMITS.perMessage)}`);
      for (const c of m.tool_calls) lines.push(`TOOL CALL ${c.name}: ${clip(JSON.stringify(c.args ?? {}), 300)}`);
      if (m.error) lines.push(`ERROR: ${clip(m.error.message, 300)}`);
    } else lines.push(`TOOL RESULT ${m.tool_name}${m.is_error ? " (error)" : ""}: ${clip(m.content, 400)}`);
  }
  return clip(lines.join("\n"), limit);
}

/** The first user message of a run: the input replayed as an evaluation case. */
export function firstPrompt(messages: readonly Message[]): string | null {
  const m = messages.find((x) => x.role === "user");
  return m && m.role === "user" ? m.content : null;
}

/** The evidence runs as one bounded text: at most `maxRuns` runs and `total` characters. */
export function describeEvidence(runs: readonly EvidenceRun[]): string {
  const parts: string[] = [];
  let used = 0;
  for (const r of runs.slice(0, TRANSCRIPT_LIMITS.maxRuns)) {
    const head = `### Run ${r.run_id}: outcome ${r.outcome}${r.rating ? `, rated ${r.rating}` : ""}${r.comment ? ` (“${clip(r.comment, 300)}”)` : ""}`;
    const part = `${head}\n${r.transcript}`;
    if (used + part.length > TRANSCRIPT_LIMITS.total) {
      parts.push(`[${runs.length - parts.length} more runs left out: the evidence is cut at ${TRANSCRIPT_LIMITS.total} characters]`);
      break;
    }
    parts.push(part);
    used += part.length;
  }
  if (runs.length > TRANSCRIPT_LIMITS.maxRuns && parts.length === TRANSCRIPT_LIMITS.maxRuns)
    parts.push(`[${runs.length - TRANSCRIPT_LIMITS.maxRuns} more runs left out]`);
  return parts.join("\n\n");
}
