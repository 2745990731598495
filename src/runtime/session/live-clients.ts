/**
 * The session's live clients: hibernatable WebSockets (their settings live in the socket attachment,
 * so they survive hibernation) and SSE streams (in memory; a dropped one reconnects with its last
 * seq). Every client gets the same frames in the same order; hidden run facts go only to clients
 * that asked for them with admin rights.
 */
import type { StreamFrame } from "./events.ts";
import { isHidden } from "./events.ts";
import { frameLine, sseChunk, type StreamEncoding } from "./protocol.ts";

export interface ClientOptions {
  clientId: string;
  includeHidden: boolean;
  /** Only this run's frames (the SSE answer of a submit). */
  runId?: string;
  /** WebSocket: the client may send messages, cancels and approval decisions (member or admin token or ticket). */
  maySend?: boolean;
  /** WebSocket: the device the client says it is (recorded with what it sends as `channel_inject`). */
  deviceId?: string;
  /** WebSocket: the token the stream was opened with (its messages count against that token's rate limit). */
  tokenId?: string;
  /** A stream's encoding (protocol.ts): the session face's SSE (default) or typed frames for the other faces. */
  encoding?: StreamEncoding;
}

/** What a WebSocket keeps across hibernation: who it is and what it may do. */
export interface WsAttachment {
  client_id: string;
  include_hidden: boolean;
  connected_at: number;
  may_send?: boolean;
  device_id?: string;
  token_id?: string;
}

interface SseClient {
  options: ClientOptions;
  writer: WritableStreamDefaultWriter<Uint8Array>;
  heartbeat: ReturnType<typeof setInterval> | undefined;
  closed: boolean;
}

const encoder = new TextEncoder();
const SSE_HEARTBEAT_MS = 20_000;

export function wants(options: Pick<ClientOptions, "includeHidden" | "runId">, frame: StreamFrame): boolean {
  if (options.runId !== undefined && frame.run_id !== options.runId) return false;
  if (frame.persistent && isHidden(frame) && !options.includeHidden) return false;
  return true;
}

/** A frame in a stream client's encoding, encoded at most once per encoding per broadcast. */
function encodedFrame(frame: StreamFrame): (encoding: StreamEncoding | undefined) => string {
  let sse: string | null = null;
  let line: string | null = null;
  return (encoding) => (encoding === "frames" ? (line ??= frameLine(frame)) : (sse ??= sseChunk(frame)));
}

export class LiveClients {
  readonly #ctx: DurableObjectState;
  readonly #sse = new Set<SseClient>();

  constructor(ctx: DurableObjectState) {
    this.#ctx = ctx;
  }

  get count(): number {
    return this.#sse.size + this.#ctx.getWebSockets().length;
  }

  broadcast(frame: StreamFrame): void {
    let wsText: string | null = null;
    for (const ws of this.#ctx.getWebSockets()) {
      const att = ws.deserializeAttachment() as WsAttachment | null;
      if (!wants({ includeHidden: att?.include_hidden ?? false }, frame)) continue;
      wsText ??= JSON.stringify(frame);
      try {
        ws.send(wsText);
      } catch {
        // A socket closing under us; webSocketClose cleans it up.
      }
    }
    const encoded = encodedFrame(frame);
    for (const client of this.#sse) {
      if (wants(client.options, frame)) this.#write(client, encoded(client.options.encoding));
    }
  }

  /**
   * A new WebSocket client: `replay` (already filtered) is sent before it can receive live frames,
   * in the same synchronous turn, so nothing falls between replay and live.
   */
  acceptWebSocket(ws: WebSocket, options: ClientOptions, replay: StreamFrame[]): void {
    this.#ctx.acceptWebSocket(ws);
    const att: WsAttachment = {
      client_id: options.clientId,
      include_hidden: options.includeHidden,
      connected_at: Date.now(),
      may_send: options.maySend === true,
      ...(options.deviceId !== undefined ? { device_id: options.deviceId } : {}),
      ...(options.tokenId !== undefined ? { token_id: options.tokenId } : {}),
    };
    ws.serializeAttachment(att);
    for (const frame of replay) ws.send(JSON.stringify(frame));
  }

  /**
   * A new stream client; returns the response body. Same ordering guarantee as WebSockets. SSE gets a
   * `connected` comment and keep-alives for the proxies between it and its HTTP client; the `frames`
   * encoding goes to the Worker only, which keeps or drops the stream itself.
   */
  openSse(options: ClientOptions, replay: StreamFrame[]): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const sse = options.encoding !== "frames";
    const client: SseClient = {
      options,
      writer,
      closed: false,
      heartbeat: sse ? setInterval(() => this.#write(client, ": keep-alive\n\n"), SSE_HEARTBEAT_MS) : undefined,
    };
    this.#sse.add(client);
    if (sse) this.#write(client, `: connected ${options.clientId}\n\n`);
    for (const frame of replay) this.#write(client, encodedFrame(frame)(options.encoding));
    writer.closed.catch(() => this.#drop(client));
    return readable;
  }

  /** Ends the SSE streams that follow one run (after its last frame). */
  endRun(runId: string): void {
    for (const client of this.#sse) {
      if (client.options.runId === runId) this.#end(client);
    }
  }

  /** A socket's settings (null for one accepted before attachments existed). */
  attachmentOf(ws: WebSocket): WsAttachment | null {
    return ws.deserializeAttachment() as WsAttachment | null;
  }

  closeWebSocket(ws: WebSocket, code: number, reason: string): void {
    try {
      ws.close(code, reason);
    } catch {
      // already closed
    }
  }

  #write(client: SseClient, text: string): void {
    if (client.closed) return;
    client.writer.write(encoder.encode(text)).catch(() => this.#drop(client));
  }

  #end(client: SseClient): void {
    if (client.closed) return;
    client.closed = true;
    clearInterval(client.heartbeat);
    this.#sse.delete(client);
    client.writer.close().catch(() => undefined);
  }

  #drop(client: SseClient): void {
    client.closed = true;
    clearInterval(client.heartbeat);
    this.#sse.delete(client);
  }
}
