/**
 * The SessionDO's stream endpoints as one wire contract (docs/sessions.md, "Talking to a session"):
 * the internal URLs, the header that says who asks, the query of a stream and the two encodings a
 * stream comes in. `SessionClient` (client.ts) builds these requests and reads the answers; the
 * SessionDO reads the requests with the same functions. Nothing else in Beaver writes
 * `https://session/...` or parses a session stream.
 *
 * Two encodings, each written once in the DO and never re-encoded on the way:
 * - `sse`: the session face's public Server-Sent Events (`id: <seq>`, `event: <type>`,
 *   `data: <frame JSON>`, keep-alive comments), handed to the HTTP client as it is;
 * - `frames`: one frame's JSON per line, for the faces that encode frames their own way (the AI SDK UI
 *   stream, OpenAI streaming); `FrameReader` turns it back into typed `StreamFrame`s.
 */
import type { RunStatus, SubmitRunInput } from "./contract.ts";
import type { StreamFrame } from "./events.ts";
import type { ConfigAndRevisionRow } from "../../storage/config/store.ts";

/** The run a submit's stream answer names (its id and status when it was queued or joined). */
export interface SubmittedRun {
  run_id: string;
  status: RunStatus;
}

/** Header the Worker uses to tell the DO's fetch handler who is asking (never accepted from clients). */
export const WORKSPACE_HEADER = "x-beaver-workspace";
/** Headers of a submit's stream answer: the run it queued (or joined) and its status then. */
export const RUN_ID_HEADER = "X-Run-Id";
export const RUN_STATUS_HEADER = "X-Run-Status";

export const STREAM_PATH = "/stream";
export const SUBMIT_PATH = "/submit";
const ORIGIN = "https://session";

export type StreamEncoding = "sse" | "frames";

/** What a stream asks for (the DO reads it back with `readStreamQuery`). */
export interface StreamQuery {
  /** Replay the persistent events after this seq (0: from the start). */
  lastSeq: number;
  includeHidden: boolean;
  clientId: string;
  /** Only this run's frames, from its start, until it ends. */
  runId?: string;
  /** WebSocket: the client may send messages, cancels and decisions (set from the token, never by the client). */
  maySend?: boolean;
  deviceId?: string;
  tokenId?: string;
  encoding: StreamEncoding;
}

/** The request for a stream. `headers` are the caller's (an `Upgrade: websocket` makes it a WebSocket). */
export function streamRequest(workspaceId: string, query: StreamQuery, headers?: HeadersInit): Request {
  const url = new URL(STREAM_PATH, ORIGIN);
  const p = url.searchParams;
  p.set("last_seq", String(query.lastSeq));
  p.set("include_hidden", String(query.includeHidden));
  p.set("client_id", query.clientId);
  p.set("encoding", query.encoding);
  if (query.runId !== undefined) p.set("run_id", query.runId);
  if (query.maySend !== undefined) p.set("may_send", String(query.maySend));
  if (query.deviceId !== undefined) p.set("device_id", query.deviceId);
  if (query.tokenId !== undefined) p.set("token_id", query.tokenId);
  const h = new Headers(headers);
  h.set(WORKSPACE_HEADER, workspaceId);
  return new Request(url, { method: "GET", headers: h });
}

export function readStreamQuery(url: URL): StreamQuery {
  const p = url.searchParams;
  const lastSeq = Number(p.get("last_seq") ?? "0");
  const runId = p.get("run_id");
  const deviceId = p.get("device_id");
  const tokenId = p.get("token_id");
  return {
    lastSeq: Number.isFinite(lastSeq) ? lastSeq : 0,
    includeHidden: p.get("include_hidden") === "true",
    clientId: p.get("client_id") ?? "stream",
    maySend: p.get("may_send") === "true",
    encoding: encodingOf(p.get("encoding")),
    ...(runId !== null ? { runId } : {}),
    ...(deviceId !== null ? { deviceId } : {}),
    ...(tokenId !== null ? { tokenId } : {}),
  };
}

/** A submit request's body: the run's input, and the workspace's config row when the edge read it for this request (run-queue.ts). */
export interface SubmitBody {
  input: SubmitRunInput;
  preread?: ConfigAndRevisionRow;
}

/** The request that queues a run and answers its frames in `encoding` (subscribed before the run can start). */
export function submitRequest(input: SubmitRunInput, encoding: StreamEncoding, preread?: ConfigAndRevisionRow): Request {
  const url = new URL(SUBMIT_PATH, ORIGIN);
  url.searchParams.set("encoding", encoding);
  const body: SubmitBody = preread ? { input, preread } : { input };
  return new Request(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", [WORKSPACE_HEADER]: input.workspace_id },
    body: JSON.stringify(body),
  });
}

export function readSubmitEncoding(url: URL): StreamEncoding {
  return encodingOf(url.searchParams.get("encoding"));
}

function encodingOf(raw: string | null): StreamEncoding {
  return raw === "frames" ? "frames" : "sse";
}

/** A stream answer's headers; a submit's also name its run. */
export function streamHeaders(encoding: StreamEncoding, outcome?: SubmittedRun): Headers {
  const headers = new Headers(
    encoding === "sse"
      ? { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache, no-transform", Connection: "keep-alive" }
      : { "Content-Type": "application/x-ndjson; charset=utf-8", "Cache-Control": "no-cache, no-transform" },
  );
  if (outcome) {
    headers.set(RUN_ID_HEADER, outcome.run_id);
    headers.set(RUN_STATUS_HEADER, outcome.status);
  }
  return headers;
}

/** The run a submit's stream answer names. */
export function submittedOf(res: Response): SubmittedRun | null {
  const runId = res.headers.get(RUN_ID_HEADER);
  if (!runId) return null;
  return { run_id: runId, status: (res.headers.get(RUN_STATUS_HEADER) ?? "queued") as RunStatus };
}

// ---- the two encodings --------------------------------------------------------------------------

/** One frame as the session face's SSE event. */
export function sseChunk(frame: StreamFrame): string {
  return `id: ${frame.seq}\nevent: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`;
}

/** One frame on the `frames` encoding: its JSON and a newline (JSON text never holds a raw newline). */
export function frameLine(frame: StreamFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/**
 * Typed frames from a `frames` body, read as the caller pulls them. `cancel` stops the body at once
 * (also while a read waits), so a client that leaves releases its place in the session; iterating
 * with `for await` and breaking out does the same.
 */
export class FrameReader implements AsyncIterable<StreamFrame> {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #queue: StreamFrame[] = [];
  #buffer = "";
  #ended = false;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  /** The next frame, or null once the stream ended. */
  async next(): Promise<StreamFrame | null> {
    while (this.#queue.length === 0) {
      if (this.#ended) return null;
      const { value, done } = await this.#reader.read();
      if (done) {
        this.#ended = true;
        this.#buffer += this.#decoder.decode();
        this.#take(true);
      } else {
        this.#buffer += this.#decoder.decode(value, { stream: true });
        this.#take(false);
      }
    }
    return this.#queue.shift()!;
  }

  async cancel(reason?: unknown): Promise<void> {
    this.#ended = true;
    this.#queue.length = 0;
    await this.#reader.cancel(reason).catch(() => undefined);
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamFrame> {
    return {
      next: async () => {
        const frame = await this.next();
        return frame === null ? { done: true, value: undefined } : { done: false, value: frame };
      },
      return: async () => {
        await this.cancel();
        return { done: true, value: undefined };
      },
    };
  }

  #take(final: boolean): void {
    for (;;) {
      let end = this.#buffer.indexOf("\n");
      if (end < 0) {
        if (!final || this.#buffer.trim() === "") return;
        end = this.#buffer.length;
      }
      const line = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 1);
      if (line.trim() !== "") this.#queue.push(JSON.parse(line) as StreamFrame);
    }
  }
}
