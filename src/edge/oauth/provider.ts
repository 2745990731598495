/**
 * Beaver as an OAuth 2.1 protected MCP server (docs/mcp.md, "Add Beaver to your assistant"):
 * Cloudflare's `@cloudflare/workers-oauth-provider` wraps the edge's fetch handler and serves the
 * protocol-owned endpoints itself — protected-resource metadata (RFC 9728), authorization-server
 * metadata (RFC 8414), dynamic client registration (RFC 7591), the token endpoint with PKCE,
 * refresh and revocation (RFC 7009) — and checks every bearer token sent to `/mcp`. Tokens are kept
 * hashed and grants encrypted in the `OAUTH_KV` namespace (the library's design, not ours).
 *
 * The authorization page is the console's (`/oauth/authorize`, console/src/pages/oauth.tsx): a
 * signed-in member approves through `POST /api/oauth/authorize` (routes/oauth.ts), which completes
 * the request with the library's helpers. Grants belong to a workspace: the library's `userId` is
 * the workspace id, so listing and revoking grants is per workspace.
 *
 * Static API tokens keep working on `/mcp` for scripts: the provider hands every bearer it did not
 * issue to `resolveExternalToken`, which resolves it like the rest of the API does.
 *
 * The resource identifier must be one canonical URL, which a Worker learns only from its requests
 * (workers.dev, a custom domain, 127.0.0.1 under `wrangler dev`): one provider per origin, so a token
 * issued on one origin is refused on another (audience binding, RFC 8707).
 */
import type * as OAuthLibraryModule from "@cloudflare/workers-oauth-provider";
import type { OAuthHelpers, OAuthProvider, OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";

type OAuthLibrary = typeof OAuthLibraryModule;
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { setBounded } from "../../kernel/memo.ts";
import { principalForToken, tokenIsLive } from "../http/auth.ts";
import { markPrincipal, principalFromProps, type McpProps } from "./principal.ts";

/** Paths the provider owns (wrangler.toml `run_worker_first` lists them so assets never answer them). */
export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
} as const;

/** The scopes an OAuth client may hold: never `admin` (docs/mcp.md, "Add Beaver to your assistant"). */
export const OAUTH_SCOPES = ["read", "member"] as const;

type FetchHandler = { fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> };

/** The provider's options for one origin, around the edge's handler. */
function optionsFor(origin: string, app: FetchHandler): OAuthProviderOptions<Env> {
  const resource = `${origin}/mcp`;
  return {
    apiRoute: "/mcp",
    // Runs for every request with a token the provider accepted; ctx.props are what the grant carries
    // (or what resolveExternalToken returned for a static token).
    apiHandler: {
      fetch: async (request: Request, env: Env, ctx: ExecutionContext) => {
        const props = (ctx as ExecutionContext & { props?: unknown }).props as McpProps | undefined;
        const auth = (ctx as ExecutionContext & { auth?: { token?: string } }).auth;
        const principal = props ? principalFromProps(props, auth?.token) : null;
        if (!principal) return new Response(null, { status: 401 });
        // A grant lasts only as long as the API token that approved it (docs/mcp.md). Revoking that token
        // revokes its grants (routes/tokens.ts); this catches a grant approved while the revocation ran,
        // or by a token revoked on another isolate within the token cache's bound.
        if (props?.kind === "oauth_grant" && !(await tokenIsLive(env, props.approved_by))) return lapsedGrant(origin);
        markPrincipal(ctx, principal);
        return app.fetch(request, env, ctx);
      },
    },
    defaultHandler: app as ExportedHandler<Env>,
    authorizeEndpoint: OAUTH_PATHS.authorize,
    tokenEndpoint: OAUTH_PATHS.token,
    clientRegistrationEndpoint: OAUTH_PATHS.register,
    scopesSupported: [...OAUTH_SCOPES],
    // An hour of access, thirty days of refresh that slide while the client keeps using them.
    accessTokenTTL: 3600,
    refreshTokenTTL: 30 * 24 * 3600,
    resourceMetadata: { resource, resource_name: "Beaver" },
    resolveExternalToken: async ({ token, env }) => {
      const principal = await principalForToken(env, token);
      return principal ? { props: { kind: "api_token", principal } satisfies McpProps, audience: resource } : null;
    },
  };
}

/** RFC 6750's answer to a token that no longer stands, as the library gives it (MCP clients then authorize again). */
function lapsedGrant(origin: string): Response {
  const challenge = `Bearer realm="OAuth", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp", error="invalid_token", scope="${OAUTH_SCOPES.join(" ")}"`;
  return new Response(null, { status: 401, headers: { "Cache-Control": "no-store", "WWW-Authenticate": challenge } });
}

let library: Promise<OAuthLibrary> | undefined;

/**
 * The library, loaded on the first request that needs it: evaluating it costs every cold isolate
 * (docs/performance.md), and it writes a warning while it loads, which must happen inside a request.
 */
export function oauthLibrary(): Promise<OAuthLibrary> {
  library ??= import("@cloudflare/workers-oauth-provider");
  return library;
}

const providers = new Map<string, OAuthProvider<Env>>();

/** The provider for a request's origin (built once per origin and isolate). */
async function providerFor(origin: string, app: FetchHandler): Promise<OAuthProvider<Env>> {
  let provider = providers.get(origin);
  if (!provider) {
    const { OAuthProvider } = await oauthLibrary();
    provider = new OAuthProvider(optionsFor(origin, app));
    setBounded(providers, origin, provider, 16);
  }
  return provider;
}

/** Paths the provider has a say in: its own endpoints, the metadata and the protected `/mcp`. */
function isOAuthPath(pathname: string): boolean {
  return (
    pathname === "/mcp" ||
    pathname.startsWith("/mcp/") ||
    pathname.startsWith("/.well-known/oauth-") ||
    pathname === OAUTH_PATHS.token ||
    pathname === OAUTH_PATHS.register
  );
}

/**
 * The edge's fetch handler behind the OAuth provider (src/index.ts). Only the paths the provider has a
 * say in go through it; every other request goes straight to the app (the provider would hand them to
 * the app unchanged, after loading itself and parsing the URL again).
 */
export function withOAuth(app: FetchHandler): FetchHandler {
  return {
    fetch: async (request, env, ctx) => {
      // A Worker built without OAuth answers with static tokens only.
      if (!env.OAUTH_KV || !isOAuthPath(new URL(request.url).pathname)) return app.fetch(request, env, ctx);
      return (await providerFor(new URL(request.url).origin, app)).fetch(request, env, ctx);
    },
  };
}

const noHandler: FetchHandler = { fetch: () => new Response(null, { status: 404 }) };

/** The library's helpers (parse and complete authorization, list and revoke grants) for one origin. */
export async function oauthHelpers(env: Env, origin: string): Promise<OAuthHelpers> {
  if (!env.OAUTH_KV) throw new AppError("server_misconfigured", "OAuth needs the OAUTH_KV namespace binding (wrangler.toml)");
  const { getOAuthApi } = await oauthLibrary();
  return getOAuthApi(optionsFor(origin, noHandler), env);
}
