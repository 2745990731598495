/**
 * One short-lived connection to a configured MCP server (docs/mcp.md, "Connections"): the official
 * SDK `Client` over its Streamable HTTP (or legacy SSE) transport, with every request sent through
 * `outboundFetch(env)` so the egress policy applies to it and each redirect, the configured headers
 * taken from workspace secrets, and one deadline (`timeout_ms`) over connect and work together.
 *
 * Workers keep no socket between requests, so a connection lives for one discovery or one tool call
 * and is closed (its session terminated) afterwards; a `notifications/tools/list_changed` that
 * arrives while it is open is handed to `onToolsChanged`.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Env } from "../../storage/env.ts";
import { outboundFetch, type FetchFn } from "../../storage/outbound.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";
import { AppError } from "../../kernel/errors.ts";
import { summariseUpstreamText } from "../../kernel/upstream-text.ts";
import type { McpServerConfig } from "./config.ts";
import { mcpSdk, type McpSdk } from "./sdk-loader.ts";
import { holderFor, insufficientScopeChallenge, providerForConnection, stepUp, type StoredOAuthProvider } from "./oauth-client.ts";

export const CLIENT_INFO = { name: "beaver", version: "0.1.0" } as const;

/** Why a connection or a request failed, in the words a tool error and the server status use. */
export type McpFailureCode =
  | "mcp_timeout"
  | "mcp_unavailable"
  | "mcp_error"
  | "egress_refused"
  | "mcp_config"
  | "cancelled"
  /** An `auth: "oauth"` server was never connected, or its grant lapsed: Connect it in the console (docs/mcp.md). */
  | "needs_authorization";

export class McpFailure extends Error {
  constructor(
    readonly code: McpFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "McpFailure";
  }
}

export interface ConnectOptions {
  env: Env;
  workspaceId: string;
  server: McpServerConfig;
  /** Who the connection is for (the run's sender, the status's caller): a personal server uses their tokens. */
  member?: string | null;
  /** The run's signal: cancelling the run abandons the connection. */
  signal?: AbortSignal;
  /** Called when the server says its tool list changed while the connection is open. */
  onToolsChanged?: () => void;
}

/**
 * Connects, runs `work` with the client and request options bound to the deadline, and closes.
 * Every failure is thrown as an `McpFailure` with a short, sanitised message.
 */
export async function withMcpClient<T>(opts: ConnectOptions, work: (client: Client, request: RequestOptions) => Promise<T>): Promise<T> {
  const { server } = opts;
  // The SDK loads on the first connection, not at the Worker's startup (sdk.ts).
  const sdk = await mcpSdk();
  const deadline = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    deadline.abort(new McpFailure("mcp_timeout", timeoutMessage(server)));
  }, server.timeout_ms);
  const onCancel = () => deadline.abort(new McpFailure("cancelled", "The run was cancelled"));
  if (opts.signal?.aborted) onCancel();
  opts.signal?.addEventListener("abort", onCancel, { once: true });

  const client = new sdk.Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  if (opts.onToolsChanged) {
    const changed = opts.onToolsChanged;
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => changed());
  }
  let transport: StreamableHTTPClientTransport | SSEClientTransport | undefined;
  try {
    const authProvider = server.auth === "oauth" ? await oauthProviderOf(opts, deadline.signal) : undefined;
    const send = deadlineFetch(outboundFetch(opts.env), deadline.signal);
    transport = makeTransport(sdk, server, authProvider ? stepUpFetch(send, opts) : send, await resolveHeaders(opts), authProvider);
    const request: RequestOptions = { signal: deadline.signal, timeout: server.timeout_ms, maxTotalTimeout: server.timeout_ms };
    return await abortable(
      (async () => {
        await client.connect(transport, request);
        return work(client, request);
      })(),
      deadline.signal,
    );
  } catch (err) {
    throw toFailure(sdk, err, server, timedOut, deadline.signal);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onCancel);
    await closeQuietly(sdk, client, transport);
  }
}

function makeTransport(
  sdk: McpSdk,
  server: McpServerConfig,
  fetch: FetchFn,
  headers: Record<string, string>,
  authProvider?: StoredOAuthProvider,
) {
  const url = new URL(server.url);
  const auth = authProvider ? { authProvider } : {};
  if (server.transport === "sse") return new sdk.SSEClientTransport(url, { fetch, requestInit: { headers }, ...auth });
  return new sdk.StreamableHTTPClientTransport(url, { fetch, requestInit: { headers }, ...auth });
}

/** The stored OAuth tokens of an `auth: "oauth"` server, refreshed when about to expire (oauth-client.ts). */
async function oauthProviderOf(opts: ConnectOptions, signal: AbortSignal): Promise<StoredOAuthProvider> {
  const holder = holderFor(opts.server, opts.workspaceId, opts.member);
  if (!holder) throw needsAuthorization(opts.server);
  const found = await providerForConnection(opts.env, holder, opts.server, deadlineFetch(outboundFetch(opts.env), signal));
  if (!found.provider) throw needsAuthorization(opts.server, found.stepUpScope);
  return found.provider;
}

const needsAuthorization = (server: McpServerConfig, stepUpScope?: string) =>
  new McpFailure(
    "needs_authorization",
    stepUpScope
      ? `MCP server '${server.name}' needs a wider authorization (scope "${stepUpScope}") for this: Connect it again in the console (MCP page)`
      : server.personal
        ? `MCP server '${server.name}' is personal and not connected for the member who sent this: Connect it in the console (MCP page)`
        : `MCP server '${server.name}' needs authorization: Connect it in the console (MCP page)`,
  );

/**
 * An `auth: "oauth"` server's requests: a 403 `insufficient_scope` challenge (step-up) ends the
 * connection with `needs_authorization` and the wider scope remembered for the next Connect
 * (oauth-client.ts `stepUp`) — re-authorizing needs the member's browser, which a run does not have
 * (the SDK transport would start that flow itself, or with a refresh token retry the same scope).
 * A challenge for scopes the grant already holds cannot be fixed by authorizing again: an error.
 */
function stepUpFetch(send: FetchFn, opts: ConnectOptions): FetchFn {
  return async (input, init) => {
    const res = await send(input, init);
    const challenge = await insufficientScopeChallenge(res);
    if (!challenge) return res;
    await res.body?.cancel();
    const holder = holderFor(opts.server, opts.workspaceId, opts.member);
    const scope = holder && (await stepUp(opts.env, holder, opts.server, challenge));
    if (scope) throw needsAuthorization(opts.server, scope);
    throw new McpFailure(
      "mcp_error",
      `MCP server '${opts.server.name}' refused this for insufficient scope${challenge.scope ? ` ("${challenge.scope}")` : ""}, which Beaver's authorization already covers`,
    );
  };
}

/** Every request also ends when the deadline (or the run) aborts. */
function deadlineFetch(send: FetchFn, deadline: AbortSignal): FetchFn {
  return (input, init) => {
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    return send(input, { ...init, signal });
  };
}

async function resolveHeaders(opts: ConnectOptions): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [header, secret] of Object.entries(opts.server.headers)) {
    const value = await resolveSecret(opts.env, opts.workspaceId, secret);
    if (value === undefined) throw new McpFailure("mcp_config", `header ${header}: workspace secret ${secret} is not set`);
    out[header] = value;
  }
  return out;
}

/** Resolves with `work`, or rejects as soon as `signal` aborts (a hung socket must not outlive the deadline). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

async function closeQuietly(
  sdk: McpSdk,
  client: Client,
  transport: StreamableHTTPClientTransport | SSEClientTransport | undefined,
): Promise<void> {
  try {
    // A stateful server keeps a session per connection: end it rather than leave it to expire.
    if (transport instanceof sdk.StreamableHTTPClientTransport && transport.sessionId) await transport.terminateSession();
  } catch {
    // best effort: the server forgets idle sessions on its own
  }
  await client.close().catch(() => undefined);
}

const timeoutMessage = (server: McpServerConfig) =>
  `MCP server '${server.name}' did not answer within ${server.timeout_ms} ms (timeout_ms)`;

/** Any error of a connection as an `McpFailure`: timeouts, refusals, protocol errors, unreachable servers. */
export function toFailure(sdk: McpSdk, err: unknown, server: McpServerConfig, timedOut: boolean, deadline?: AbortSignal): McpFailure {
  if (err instanceof McpFailure) return err;
  if (err instanceof sdk.UnauthorizedError) return needsAuthorization(server);
  if (deadline?.aborted && deadline.reason instanceof McpFailure) return deadline.reason;
  if (timedOut || (err instanceof sdk.McpError && err.code === sdk.ErrorCode.RequestTimeout))
    return new McpFailure("mcp_timeout", timeoutMessage(server));
  if (err instanceof AppError && err.code === "egress_refused") return new McpFailure("egress_refused", err.message);
  if (err instanceof AppError && err.code === "bad_request") return new McpFailure("mcp_config", err.message);
  const text = summariseUpstreamText(err instanceof Error ? err.message || err.name : String(err));
  if (err instanceof sdk.McpError) return new McpFailure("mcp_error", `MCP server '${server.name}' answered an error: ${text}`);
  return new McpFailure("mcp_unavailable", `MCP server '${server.name}' is unreachable: ${text}`);
}
