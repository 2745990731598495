/**
 * Live progress of an evaluation as Server-Sent Events (docs/evaluation.md, "Progress"). The stream
 * reads the EvaluationDO's view a few times a second and sends a `progress` frame each time its
 * `version` moved (a case was claimed or finished, the evaluation ended), then one `done` frame with
 * the report and closes. Polling the object, rather than the object pushing, keeps the object free of
 * connections and lets a stream outlive an eviction of it: the next read simply wakes it again.
 */
import type { Env } from "../../../storage/env.ts";
import { unwrap, type Outcome } from "../../../kernel/outcome.ts";
import { errorFields, log } from "../../../kernel/log.ts";
import { evaluationStub } from "./client.ts";
import type { EvaluationView } from "./evaluation-do.ts";

/** How often the stream reads the evaluation. */
export const STREAM_POLL_MS = 200;
/** A stream ends after this long even when the evaluation has not (clients reconnect). */
export const STREAM_MAX_MS = 30 * 60_000;

export type ProgressFrame =
  | { type: "progress"; evaluation: Omit<EvaluationView, "report"> }
  | { type: "done"; evaluation: EvaluationView }
  | { type: "error"; error: { code: string; message: string } };

const encoder = new TextEncoder();
const sse = (frame: ProgressFrame, id: number) => encoder.encode(`id: ${id}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`);

/** The SSE body; the first read (404 when there is no evaluation) happens before the caller answers. */
export async function evaluationProgressStream(env: Env, workspaceId: string, draftId: string): Promise<ReadableStream<Uint8Array>> {
  const stub = evaluationStub(env, workspaceId, draftId);
  const read = async () => unwrap((await (stub.view(workspaceId) as Promise<unknown>)) as Outcome<EvaluationView>);
  const first = await read();
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const started = Date.now();
      let current = first;
      let sent = -1;
      try {
        while (!cancelled) {
          if (current.status !== "running") {
            controller.enqueue(sse({ type: "done", evaluation: current }, current.version));
            break;
          }
          if (current.version !== sent) {
            const { report: _report, ...progress } = current;
            controller.enqueue(sse({ type: "progress", evaluation: progress }, current.version));
            sent = current.version;
          }
          if (Date.now() - started > STREAM_MAX_MS) break;
          await new Promise((r) => setTimeout(r, STREAM_POLL_MS));
          current = await read();
        }
      } catch (e) {
        log.warn("evaluation stream ended by an error", { draft_id: draftId, ...errorFields(e) });
        const code = e instanceof Error && "code" in e && typeof e.code === "string" ? e.code : "internal";
        if (!cancelled) controller.enqueue(sse({ type: "error", error: { code, message: "the evaluation could not be read" } }, -1));
      }
      if (!cancelled) controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
}
