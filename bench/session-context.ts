/**
 * Per-turn cost of the model's context in a 10,000-event session: the SessionDO's way (keep the
 * tree in memory, add the new event in O(1), build a bounded window by walking up only as far as
 * it needs) against the baseline of rebuilding the tree from the whole log every turn. A third
 * figure shows the in-memory tree with an unbounded context (a walk of the whole path).
 */
import { performance } from "node:perf_hooks";
import { buildContext } from "../src/runtime/session/build-context.ts";
import type { Message, PersistentEvent } from "../src/runtime/session/events.ts";
import { SessionTree, activeLeafAfter } from "../src/runtime/session/tree.ts";

const LOG_SIZE = 10_000;
const TURNS = 300;
const WARM_UP = 20;
const WINDOW = 200;

/** Appends events the way the SessionDO does: parent = active leaf, hidden run facts parentless. */
export class SyntheticLog {
  readonly events: PersistentEvent[] = [];
  leaf: string | null = null;
  #seq = 0;

  visible(message: Message): PersistentEvent {
    return this.#push({ type: "message", message, parent_id: this.leaf });
  }

  hidden(): PersistentEvent {
    return this.#push({ type: "run_started", input: {}, parent_id: null });
  }

  #push(
    body:
      | { type: "message"; message: Message; parent_id: string | null }
      | { type: "run_started"; input: Record<string, unknown>; parent_id: null },
  ): PersistentEvent {
    this.#seq += 1;
    const event = {
      ...body,
      id: `evt_${this.#seq}`,
      seq: this.#seq,
      session_id: "ses_bench",
      client_id: "bench",
      ts: this.#seq,
      run_id: "run_bench",
    } satisfies PersistentEvent;
    this.events.push(event);
    this.leaf = activeLeafAfter(this.leaf, event);
    return event;
  }

  /** One run: a question, a tool call with two results (a steer between them now and then), an answer. */
  turn(i: number): PersistentEvent[] {
    const before = this.events.length;
    this.hidden();
    this.visible({ role: "user", content: `Question ${i}: what does module ${i % 97} do?` });
    this.visible({
      role: "assistant",
      text: "",
      tool_calls: [
        { id: `c${i}a`, name: "read", args: { i } },
        { id: `c${i}b`, name: "grep", args: { i } },
      ],
    });
    this.visible({ role: "tool_result", tool_call_id: `c${i}a`, tool_name: "read", content: "x".repeat(400), is_error: false });
    if (i % 5 === 0) this.visible({ role: "user", content: "focus on errors", meta: { source: "steer" } });
    this.visible({ role: "tool_result", tool_call_id: `c${i}b`, tool_name: "grep", content: "y".repeat(200), is_error: false });
    this.visible({ role: "assistant", text: `Module ${i % 97} parses the config.`, tool_calls: [] });
    return this.events.slice(before);
  }
}

export function seedLog(): SyntheticLog {
  const log = new SyntheticLog();
  for (let i = 0; log.events.length < LOG_SIZE; i++) log.turn(i);
  return log;
}

/** Mean milliseconds per turn of `step`, after untimed warm-up turns (JIT). */
export function perTurn(step: (turn: number) => void): number {
  for (let w = 0; w < WARM_UP; w++) step(-1 - w);
  const start = performance.now();
  for (let t = 0; t < TURNS; t++) step(t);
  return (performance.now() - start) / TURNS;
}

export async function run(): Promise<void> {
  const incrementalLog = seedLog();
  const tree = SessionTree.fromEvents(incrementalLog.events);
  let window: Message[] = [];
  const incremental = perTurn((t) => {
    for (const event of incrementalLog.turn(100_000 + t)) tree.add(event);
    window = buildContext(tree, incrementalLog.leaf, { maxMessages: WINDOW });
  });

  const fullLog = seedLog();
  const fullTree = SessionTree.fromEvents(fullLog.events);
  let fullLength = 0;
  const unbounded = perTurn((t) => {
    for (const event of fullLog.turn(100_000 + t)) fullTree.add(event);
    fullLength = buildContext(fullTree, fullLog.leaf).length;
  });

  const baselineLog = seedLog();
  let baselineWindow: Message[] = [];
  const baseline = perTurn((t) => {
    baselineLog.turn(100_000 + t);
    baselineWindow = buildContext(SessionTree.fromEvents(baselineLog.events), baselineLog.leaf, { maxMessages: WINDOW });
  });

  // Both ways must produce the same context, or the comparison means nothing.
  if (JSON.stringify(baselineWindow) !== JSON.stringify(window)) throw new Error("in-memory and rebuilt windows differ");
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  console.log(`log: ${LOG_SIZE.toLocaleString("en")}+ events, ${TURNS} timed turns of 6–7 events each, window ${WINDOW} messages`);
  console.log(`baseline  rebuild tree from the log + windowed context : ${ms(baseline)} per turn`);
  console.log(`in-memory add + windowed context (SessionDO)          : ${ms(incremental)} per turn (${window.length} messages)`);
  console.log(`in-memory add + unbounded context                     : ${ms(unbounded)} per turn (${fullLength} messages)`);
  console.log(`ratio baseline / in-memory windowed : ${(baseline / incremental).toFixed(1)}×`);
  console.log(`ratio baseline / in-memory unbounded: ${(baseline / unbounded).toFixed(1)}×`);
}
