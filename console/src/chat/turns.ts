/**
 * Transcript items → conversation turns (docs/console.md, "Chat"). A run's assistant steps and tool
 * results are separate items in the transcript, but one answer in the live stream; grouping them into
 * one turn — each tool call with its result — renders a finished run exactly like the streamed answer,
 * so nothing jumps when a run ends. Pure, so it is unit-tested (test/console/turns.pure.test.ts).
 */
export interface TurnItem {
  event_id: string;
  kind: string;
  type: string;
  text: string;
  run_id: string | null;
  [key: string]: unknown;
}

export type Turn<I extends TurnItem> =
  { kind: "single"; item: I } | { kind: "answer"; run_id: string | null; steps: I[]; results: Map<string, I>; first: I };

/** Consecutive assistant and tool_result items of one run become one `answer`; everything else stays on its own. */
export function groupTurns<I extends TurnItem>(items: I[]): Turn<I>[] {
  const out: Turn<I>[] = [];
  for (const item of items) {
    const last = out.at(-1);
    const sameAnswer = last?.kind === "answer" && last.run_id === item.run_id;
    if (item.kind === "assistant") {
      if (sameAnswer) last.steps.push(item);
      else out.push({ kind: "answer", run_id: item.run_id, steps: [item], results: new Map(), first: item });
    } else if (item.kind === "tool_result" && sameAnswer) {
      last.results.set(String(item.tool_call_id), item);
    } else out.push({ kind: "single", item });
  }
  return out;
}
