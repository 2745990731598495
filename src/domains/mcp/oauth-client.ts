/**
 * Beaver as an OAuth client of hosted MCP servers (docs/mcp.md, "Connect a hosted MCP server"): a
 * server configured with `auth: "oauth"` gets the MCP SDK's own client-side authorization — discovery
 * (RFC 9728, RFC 8414), dynamic registration (RFC 7591), the authorization-code flow with PKCE and
 * refresh — through `auth()` and the `OAuthClientProvider` below. What the SDK asks the provider to
 * keep (the registered client, the tokens, the PKCE verifier) is one record per workspace and server —
 * per member too for a `personal` server (docs/mcp.md, "Personal servers") — sealed with the workspace-secrets encryption (storage/secrets/crypto.ts, BEAVER_SECRETS_KEY) and
 * stored in the `OAUTH_KV` namespace. The console starts the flow ("Connect") and receives the
 * callback (routes/mcp-oauth.ts); runs only use and refresh the tokens, and a grant that lapsed is an
 * `McpFailure("needs_authorization")` rather than an opaque error.
 */
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Env } from "../../storage/env.ts";
import { seal, unseal, type Sealed } from "../../storage/secrets/crypto.ts";
import type { FetchFn } from "../../storage/outbound.ts";
import { AppError } from "../../kernel/errors.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";
import type { McpServerConfig } from "./config.ts";
// The SDK loads on the first authorization or connection, not at the Worker's startup (sdk.ts).
import { mcpSdk } from "./sdk-loader.ts";

/** What Beaver keeps per workspace and server (sealed). */
export interface McpOAuthRecord {
  /** The server URL the record belongs to: a changed URL starts over. */
  server_url: string;
  redirect_url?: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  /** When the tokens were saved (ms), to know when `expires_in` runs out. */
  tokens_saved_at?: number;
  verifier?: string;
  /**
   * Where the server's challenge said its protected-resource metadata lives (Connect's probe): the
   * callback's token exchange and later refreshes must discover the same authorization server, or the
   * SDK refuses the client registered with it.
   */
  resource_metadata_url?: string;
  /** The scope the latest Connect asked for (its authorization URL's `scope`): what step-up adds to. */
  scope?: string;
  /**
   * Set when the server refused the grant with 403 `insufficient_scope` (step-up, `stepUp` below):
   * the union of the scope asked before and the challenged one. While set the server needs
   * authorization; the next Connect asks for exactly this scope, and new tokens clear it.
   */
  step_up_scope?: string;
}

/** Refresh this long before the access token expires. */
export const REFRESH_MARGIN_MS = 60_000;
/** How long a started authorization may wait for its callback. */
const STATE_TTL_SECONDS = 600;

/**
 * Whose tokens a record holds: the workspace's, or for a `personal` server one member's — the API
 * token (or grant) that pressed Connect, and whose messages' runs use them (kernel/sent-by.ts).
 */
export interface TokenHolder {
  workspaceId: string;
  member: string | null;
}

/** The holder of `server`'s tokens for a caller; null when the server is personal and the caller is nobody (a schedule's run). */
export function holderFor(server: McpServerConfig, workspaceId: string, member: string | null | undefined): TokenHolder | null {
  if (!server.personal) return { workspaceId, member: null };
  return member ? { workspaceId, member } : null;
}

const recordKey = (holder: TokenHolder, server: string) =>
  holder.member === null ? `mcpc:${holder.workspaceId}:${server}` : `mcpc:${holder.workspaceId}:${server}:member:${holder.member}`;
const stateKey = (state: string) => `mcpc-state:${state}`;

function kvOf(env: Env): KVNamespace {
  if (!env.OAUTH_KV) throw new AppError("server_misconfigured", "MCP OAuth needs the OAUTH_KV namespace binding (wrangler.toml)");
  return env.OAUTH_KV;
}

export async function loadRecord(env: Env, holder: TokenHolder, server: McpServerConfig): Promise<McpOAuthRecord> {
  const key = recordKey(holder, server.name);
  const sealed = await kvOf(env).get<Sealed>(key, "json");
  if (!sealed) return { server_url: server.url };
  try {
    const record = JSON.parse(await unseal(env.BEAVER_SECRETS_KEY, key, sealed)) as McpOAuthRecord;
    return record.server_url === server.url ? record : { server_url: server.url };
  } catch {
    return { server_url: server.url }; // the key changed: authorize again
  }
}

async function saveRecord(env: Env, holder: TokenHolder, server: string, record: McpOAuthRecord): Promise<void> {
  const key = recordKey(holder, server);
  await kvOf(env).put(key, JSON.stringify(await seal(env.BEAVER_SECRETS_KEY, key, JSON.stringify(record))));
}

/** Forgets a server's tokens and client (the console's "Disconnect"). */
export async function forgetRecord(env: Env, holder: TokenHolder, server: string): Promise<void> {
  await kvOf(env).delete(recordKey(holder, server));
}

/**
 * Forgets every personal server's tokens held by these members of a workspace: what a revoked API
 * token connected ends with it (docs/mcp.md, "Personal servers"). Server names hold no `:`
 * (config.ts), so a key's tail names its member.
 */
export async function forgetMemberRecords(env: Env, workspaceId: string, members: string[]): Promise<void> {
  const kv = env.OAUTH_KV;
  if (!kv || members.length === 0) return;
  const tails = members.map((m) => `:member:${m}`);
  let cursor: string | undefined;
  do {
    const page = await kv.list({ prefix: `mcpc:${workspaceId}:`, ...(cursor ? { cursor } : {}) });
    await Promise.all(page.keys.filter((k) => tails.some((t) => k.name.endsWith(t))).map((k) => kv.delete(k.name)));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
}

/** Where each deployment serves its client ID metadata document (public; routes/mcp-oauth.ts). */
export const CLIENT_METADATA_PATH = "/api/mcp/client-metadata.json";

/** What Beaver says of itself as an OAuth client: in a dynamic registration and in its metadata document. */
function beaverClientMetadata(redirectUris: string[]): OAuthClientMetadata {
  return {
    client_name: "Beaver",
    redirect_uris: redirectUris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

/**
 * The client ID metadata document of the deployment at `origin` (draft-ietf-oauth-client-id-metadata-document,
 * the MCP authorization spec's "Client ID Metadata Documents"): its `client_id` is its own URL, and
 * its one redirect URI the console's callback on the same origin. Pure.
 */
export function clientMetadataDocument(
  origin: string,
  callbackPath: string,
): OAuthClientMetadata & { client_id: string; client_uri: string } {
  return { client_id: `${origin}${CLIENT_METADATA_PATH}`, client_uri: origin, ...beaverClientMetadata([`${origin}${callbackPath}`]) };
}

/** The SDK's view of one record; every change is written back at once. */
export class StoredOAuthProvider implements OAuthClientProvider {
  /** Set when the SDK wanted a browser: the URL the console sends the member to. */
  authorizationUrl: URL | undefined;
  private pendingState: string | undefined;

  constructor(
    private readonly env: Env,
    private readonly holder: TokenHolder,
    private readonly server: McpServerConfig,
    readonly record: McpOAuthRecord,
  ) {}

  get redirectUrl(): string | undefined {
    return this.record.redirect_url;
  }

  get clientMetadata(): OAuthClientMetadata {
    return beaverClientMetadata(this.record.redirect_url ? [this.record.redirect_url] : []);
  }

  /**
   * Beaver's client ID metadata document on the origin the member's browser comes back to: an
   * authorization server that advertises `client_id_metadata_document_supported` gets this URL as the
   * client id instead of a registration (the SDK's SEP-991 branch). Only an HTTPS origin qualifies
   * (the SDK refuses others), so a plain-HTTP `wrangler dev` registers dynamically.
   */
  get clientMetadataUrl(): string | undefined {
    if (!this.record.redirect_url) return undefined;
    const url = new URL(CLIENT_METADATA_PATH, this.record.redirect_url);
    return url.protocol === "https:" ? url.href : undefined;
  }

  state(): string {
    this.pendingState ??= crypto.randomUUID();
    return this.pendingState;
  }

  /** The configured pre-registered client (its secret read from the workspace secrets), else the registered one. */
  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const pre = this.server.oauth;
    if (!pre) return this.record.client;
    if (!pre.client_secret_secret) return { client_id: pre.client_id };
    const secret = await resolveSecret(this.env, this.holder.workspaceId, pre.client_secret_secret);
    if (secret === undefined)
      throw new AppError(
        "bad_request",
        `MCP server '${this.server.name}': workspace secret ${pre.client_secret_secret} is not set (oauth.client_secret_secret)`,
      );
    return { client_id: pre.client_id, client_secret: secret };
  }

  async saveClientInformation(info: OAuthClientInformationMixed) {
    // A pre-registered client lives in the configuration (its secret in the secrets store), never here.
    if (this.server.oauth) return;
    this.record.client = info;
    await this.save();
  }

  tokens() {
    return this.record.tokens;
  }

  async saveTokens(tokens: OAuthTokens) {
    this.record.tokens = tokens;
    this.record.tokens_saved_at = Date.now();
    delete this.record.step_up_scope;
    await this.save();
  }

  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    const state = url.searchParams.get("state");
    if (state) {
      await kvOf(this.env).put(
        stateKey(state),
        JSON.stringify({
          workspace_id: this.holder.workspaceId,
          member: this.holder.member,
          server: this.server.name,
        } satisfies PendingState),
        {
          expirationTtl: STATE_TTL_SECONDS,
        },
      );
    }
  }

  async saveCodeVerifier(verifier: string) {
    this.record.verifier = verifier;
    await this.save();
  }

  codeVerifier(): string {
    if (!this.record.verifier) throw new Error("No authorization in progress");
    return this.record.verifier;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") delete this.record.client;
    if (scope === "all" || scope === "tokens") delete this.record.tokens;
    if (scope === "all" || scope === "verifier") delete this.record.verifier;
    await this.save();
  }

  save() {
    return saveRecord(this.env, this.holder, this.server.name, this.record);
  }
}

/** Whether the record's access token runs out within the margin (or has no known lifetime left). */
export function needsRefresh(record: McpOAuthRecord, now = Date.now()): boolean {
  const t = record.tokens;
  if (!t?.expires_in || record.tokens_saved_at === undefined) return false;
  return record.tokens_saved_at + t.expires_in * 1000 - REFRESH_MARGIN_MS <= now;
}

/**
 * Starts (or, with tokens still good, confirms) the authorization of one server: the URL to send the
 * member's browser to, or null when Beaver is already authorized.
 */
export async function startAuthorization(
  env: Env,
  holder: TokenHolder,
  server: McpServerConfig,
  redirectUrl: string,
  fetchFn: FetchFn,
): Promise<URL | null> {
  const record = await loadRecord(env, holder, server);
  if (record.redirect_url !== redirectUrl) {
    // A registration is bound to its redirect URI: register again for this one.
    delete record.client;
    record.redirect_url = redirectUrl;
  }
  delete record.tokens;
  const provider = new StoredOAuthProvider(env, holder, server, record);
  const challenge = await probeChallenge(server, fetchFn);
  const resourceMetadataUrl =
    challenge.resourceMetadataUrl ?? (record.step_up_scope ? metadataUrlOf(record).resourceMetadataUrl : undefined);
  if (resourceMetadataUrl) record.resource_metadata_url = resourceMetadataUrl.href;
  else delete record.resource_metadata_url;
  // After a step-up challenge, the remembered union; else the 401 challenge's scope (or auth()'s fallbacks).
  const scope = record.step_up_scope ? unionScopes(record.step_up_scope, challenge.scope) : challenge.scope;
  const { auth } = await mcpSdk();
  const result = await auth(provider, { serverUrl: server.url, fetchFn, scope, resourceMetadataUrl });
  const url = result === "REDIRECT" ? (provider.authorizationUrl ?? null) : null;
  if (url) {
    const asked = url.searchParams.get("scope");
    if (asked) record.scope = asked;
    else delete record.scope;
    await provider.save();
  }
  return url;
}

/** Space-separated scope lists joined without repeats, in first-seen order (RFC 6749 §3.3). */
export function unionScopes(...lists: (string | undefined)[]): string {
  return [...new Set(lists.flatMap((l) => (l ?? "").split(" ")).filter((s) => s !== ""))].join(" ");
}

/**
 * A 403 whose challenge is `error="insufficient_scope"` (RFC 6750 §3.1): the grant is valid but too
 * narrow for this request — the MCP authorization spec's step-up ("Scope Challenge Handling").
 */
export async function insufficientScopeChallenge(res: Response): Promise<Challenge | null> {
  if (res.status !== 403) return null;
  const { extractWWWAuthenticateParams } = await mcpSdk();
  const { scope, resourceMetadataUrl, error } = extractWWWAuthenticateParams(res);
  if (error !== "insufficient_scope") return null;
  return { ...(scope ? { scope } : {}), ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}) };
}

/**
 * Step-up after an `insufficient_scope` challenge: a re-authorization needs the member's browser, so
 * the grant is put aside and the union of the scope asked before and the challenged one remembered
 * (SEP-2350: clients accumulate scopes) — the server shows `needs_authorization` and the next Connect
 * asks for the union. Answers that scope; or null when the grant already has every challenged scope,
 * so authorizing again could not help (no loop of authorizations: conformance `scope-retry-limit`).
 */
export async function stepUp(env: Env, holder: TokenHolder, server: McpServerConfig, challenge: Challenge): Promise<string | null> {
  const record = await loadRecord(env, holder, server);
  // What the authorization server granted (its token response's `scope`), else what Connect asked for.
  const granted = new Set(unionScopes(record.tokens?.scope ?? record.scope).split(" "));
  const wanted = unionScopes(challenge.scope)
    .split(" ")
    .filter((s) => s !== "");
  if (wanted.length === 0 || wanted.every((s) => granted.has(s))) return null;
  record.step_up_scope = unionScopes(record.scope, record.tokens?.scope, challenge.scope);
  if (challenge.resourceMetadataUrl) record.resource_metadata_url = challenge.resourceMetadataUrl.href;
  delete record.tokens;
  await saveRecord(env, holder, server.name, record);
  return record.step_up_scope;
}

/** What a request's 401 (or 403) challenge names (RFC 6750 §3, RFC 9728 §5.1). */
export interface Challenge {
  scope?: string;
  resourceMetadataUrl?: URL;
}

/**
 * Asks the MCP server first, as the MCP authorization spec's flow starts ("Protected Resource
 * Metadata Discovery", "Scope Selection Strategy"): an unauthenticated `initialize` (and, when the
 * server lets `initialize` through, a `tools/list`) whose 401 `WWW-Authenticate` challenge names the
 * scope to ask for and where the protected-resource metadata lives (which need not be a well-known
 * URL). Parsed with the MCP SDK's own `extractWWWAuthenticateParams`. Anything else (no challenge, a
 * network error) leaves discovery to `auth()`'s well-known fallbacks.
 */
export async function probeChallenge(server: McpServerConfig, fetchFn: FetchFn): Promise<Challenge> {
  const { extractWWWAuthenticateParams, LATEST_PROTOCOL_VERSION } = await mcpSdk();
  const post = async (method: string, id: number, params: Record<string, unknown>, session?: string | null) => {
    const res = await fetchFn(server.url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION,
        ...(session ? { "Mcp-Session-Id": session } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    });
    await res.body?.cancel();
    return res;
  };
  const challenge = (res: Response): Challenge | null => {
    if (res.status !== 401 && res.status !== 403) return null;
    const { scope, resourceMetadataUrl } = extractWWWAuthenticateParams(res);
    return { ...(scope ? { scope } : {}), ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}) };
  };
  try {
    const init = await post("initialize", 0, {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "beaver", version: "1" },
    });
    const first = challenge(init);
    if (first || !init.ok) return first ?? {};
    return challenge(await post("tools/list", 1, {}, init.headers.get("mcp-session-id"))) ?? {};
  } catch {
    return {};
  }
}

/** An authorization waiting for its callback: who started it, for which server. */
interface PendingState {
  workspace_id: string;
  /** The member who pressed Connect on a personal server; null for the workspace's tokens. */
  member: string | null;
  server: string;
}

/**
 * The server (and holder) a callback's `state` belongs to (it works once), or null: another
 * workspace's state, or another member's for a personal server, is not found.
 */
export async function takeState(
  env: Env,
  caller: { workspaceId: string; member: string },
  state: string,
): Promise<{ server: string; holder: TokenHolder } | null> {
  const kv = kvOf(env);
  const found = await kv.get<PendingState>(stateKey(state), "json");
  if (!found || found.workspace_id !== caller.workspaceId) return null;
  const member = found.member ?? null;
  if (member !== null && member !== caller.member) return null;
  await kv.delete(stateKey(state));
  return { server: found.server, holder: { workspaceId: found.workspace_id, member } };
}

/** Exchanges the callback's code for tokens (PKCE verifier and client from the record). */
export async function finishAuthorization(env: Env, holder: TokenHolder, server: McpServerConfig, code: string, fetchFn: FetchFn) {
  const provider = new StoredOAuthProvider(env, holder, server, await loadRecord(env, holder, server));
  const { auth } = await mcpSdk();
  return auth(provider, { serverUrl: server.url, authorizationCode: code, fetchFn, ...metadataUrlOf(provider.record) });
}

/** The remembered protected-resource metadata URL, as `auth()` takes it. */
function metadataUrlOf(record: McpOAuthRecord): { resourceMetadataUrl?: URL } {
  return record.resource_metadata_url ? { resourceMetadataUrl: new URL(record.resource_metadata_url) } : {};
}

/**
 * The provider a connection uses: its tokens refreshed first when they are about to expire. Without
 * one — the server was never authorized, its grant lapsed, or a step-up awaits Connect (its scope
 * given) — the caller reports `needs_authorization`.
 */
export async function providerForConnection(
  env: Env,
  holder: TokenHolder,
  server: McpServerConfig,
  fetchFn: FetchFn,
): Promise<{ provider: StoredOAuthProvider } | { provider: null; stepUpScope?: string }> {
  const provider = new StoredOAuthProvider(env, holder, server, await loadRecord(env, holder, server));
  const none = provider.record.step_up_scope ? { provider: null, stepUpScope: provider.record.step_up_scope } : { provider: null };
  if (!provider.record.tokens) return none;
  if (needsRefresh(provider.record)) {
    try {
      const { auth } = await mcpSdk();
      if ((await auth(provider, { serverUrl: server.url, fetchFn, ...metadataUrlOf(provider.record) })) !== "AUTHORIZED") return none;
    } catch {
      return none;
    }
  }
  return provider.record.tokens ? { provider } : none;
}
