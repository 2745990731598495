/**
 * `/api/oauth`: the console's side of Beaver's OAuth authorization server (docs/mcp.md, "Add Beaver
 * to your assistant"). The console page at `/oauth/authorize` hands the client's authorization request
 * (its query string) to these routes with the signed-in member's own bearer token:
 *   - `POST /requests` checks it with the library (client, redirect URI, PKCE method, scope) and says
 *     what the consent page must show;
 *   - `POST /authorize` grants the workspace and scopes the member picked — never beyond the member's
 *     own, never `admin` — and answers the redirect back to the client with its code;
 *   - `POST /deny` answers the redirect with `error=access_denied`;
 *   - `GET /grants` and `DELETE /grants/{id}` list and revoke the workspace's grants (revoking one ends
 *     its access and refresh tokens at once).
 * A request the library refuses is a 400 whose details carry the OAuth error code and, when the
 * redirect URI was validated, where to send the browser (RFC 6749 §4.1.2.1); a bad redirect URI is
 * never redirected to.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { AuthRequest, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { hasScope, requireScope, tokenIsLive, type Principal } from "../auth.ts";
import { getWorkspace, listWorkspaces } from "../../../storage/workspaces.ts";
import { WorkspaceIdSchema } from "./workspaces.ts";
import { OAUTH_PATHS, OAUTH_SCOPES, oauthHelpers, oauthLibrary } from "../../oauth/provider.ts";
import type { McpProps } from "../../oauth/principal.ts";

const OAuthScope = z.enum(OAUTH_SCOPES);
const AuthorizationQuery = z
  .string()
  .min(1)
  .max(8192)
  .describe("The query string of the client's authorization request (what follows `?` in /oauth/authorize?…)");

const ConsentRequest = z
  .object({
    client_id: z.string(),
    client_name: z.string().describe("Self-asserted by the client at registration: show it as such"),
    client_uri: z.string().nullable(),
    redirect_uri: z.string(),
    redirect_host: z.string().describe("Where the code goes: the page must show it"),
    redirect_is_loopback: z.boolean().describe("The code goes to a program on the user's machine"),
    requested_scopes: z.array(z.string()),
    grantable_scopes: z.array(OAuthScope).describe("The scopes this member may grant (never beyond their own)"),
    workspaces: z.array(z.object({ id: z.string(), name: z.string() })).describe("The workspaces this member may grant access to"),
  })
  .openapi("OAuthConsentRequest");

const Redirect = z.object({ redirect_to: z.string().describe("Where the console sends the browser next") }).openapi("OAuthRedirect");

const Grant = z
  .object({
    id: z.string(),
    client_id: z.string(),
    client_name: z.string().nullable(),
    scopes: z.array(z.string()),
    approved_by: z.string().nullable().describe("The id of the API token the approving member was signed in with"),
    created_at: z.number().describe("Unix seconds"),
    expires_at: z.number().nullable().describe("Unix seconds; when the refresh token lapses"),
  })
  .openapi("OAuthGrant");

const describeRoute = createRoute({
  method: "post",
  path: "/requests",
  tags: ["oauth"],
  summary: "Check an OAuth authorization request and describe it for the consent page",
  request: { body: jsonBody(z.strictObject({ query: AuthorizationQuery })) },
  responses: { 200: jsonResponse(ConsentRequest, "What the consent page shows"), ...errorResponses(404, 503) },
});

const authorizeRoute = createRoute({
  method: "post",
  path: "/authorize",
  tags: ["oauth"],
  summary: "Approve an OAuth authorization request for a workspace and scopes",
  request: {
    body: jsonBody(
      z.strictObject({
        query: AuthorizationQuery,
        workspace_id: WorkspaceIdSchema.optional().describe("Default: the signed-in token's workspace"),
        scopes: z.array(OAuthScope).min(1).max(2),
      }),
    ),
  },
  responses: { 200: jsonResponse(Redirect, "Approved: send the browser to the client with its code"), ...errorResponses(404, 503) },
});

const denyRoute = createRoute({
  method: "post",
  path: "/deny",
  tags: ["oauth"],
  summary: "Decline an OAuth authorization request",
  request: { body: jsonBody(z.strictObject({ query: AuthorizationQuery })) },
  responses: { 200: jsonResponse(Redirect, "Declined: send the browser to the client with error=access_denied"), ...errorResponses(503) },
});

const listGrantsRoute = createRoute({
  method: "get",
  path: "/grants",
  tags: ["oauth"],
  summary: "The workspace's OAuth grants (assistants connected to /mcp)",
  middleware: [requireScope("member")] as const,
  responses: { 200: jsonResponse(z.object({ grants: z.array(Grant) }), "Grants"), ...errorResponses(503) },
});

const revokeGrantRoute = createRoute({
  method: "delete",
  path: "/grants/{id}",
  tags: ["oauth"],
  summary: "Revoke an OAuth grant: its access and refresh tokens stop working at once",
  middleware: [requireScope("member")] as const,
  request: { params: z.object({ id: z.string().min(1).max(200) }) },
  responses: { 200: jsonResponse(z.object({ id: z.string(), revoked: z.literal(true) }), "Revoked"), ...errorResponses(404, 503) },
});

/** The library's verdict on an authorization request, or a 400 carrying its OAuth error. */
async function parseRequest(helpers: OAuthHelpers, origin: string, query: string): Promise<AuthRequest> {
  try {
    return await helpers.parseAuthRequest(new Request(`${origin}${OAUTH_PATHS.authorize}?${query.replace(/^\?/, "")}`));
  } catch (error) {
    const { AuthorizationError } = await oauthLibrary();
    if (error instanceof AuthorizationError) {
      throw new AppError("bad_request", `Authorization request refused: ${error.description}`, {
        details: { oauth_error: error.code, ...(error.redirectTo ? { redirect_to: error.redirectTo } : {}) },
      });
    }
    throw new AppError("bad_request", `Authorization request refused: ${error instanceof Error ? error.message : String(error)}`, {
      details: { oauth_error: "invalid_request" },
    });
  }
}

/** Requested scopes Beaver does not know are refused with the RFC's `invalid_scope` (RFC 6749 §4.1.2.1). */
async function assertKnownScopes(request: AuthRequest): Promise<void> {
  const { authorizationErrorRedirect } = await oauthLibrary();
  const unknown = request.scope.filter((s) => !(OAUTH_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new AppError("bad_request", `Unknown scope(s): ${unknown.join(", ")}; Beaver grants read and member`, {
      details: { oauth_error: "invalid_scope", redirect_to: authorizationErrorRedirect(request, "invalid_scope", "unknown scope") },
    });
  }
}

const grantableScopes = (p: Principal) => OAUTH_SCOPES.filter((s) => hasScope(p, s));

/** The workspace a member grants access to: their own, or any existing one for the bootstrap token. */
async function grantedWorkspace(env: Parameters<typeof getWorkspace>[0], p: Principal, requested?: string): Promise<string> {
  if (!requested || requested === p.workspaceId) return p.workspaceId;
  if (!p.bootstrap) throw new AppError("forbidden", "You can grant access only to your own workspace");
  if (!(await getWorkspace(env, requested))) throw notFound(`Workspace '${requested}'`);
  return requested;
}

const originOf = (url: string) => new URL(url).origin;

export const oauthRoutes = newRouter()
  .openapi(describeRoute, async (c) => {
    const p = c.get("principal");
    const helpers = await oauthHelpers(c.env, originOf(c.req.url));
    const request = await parseRequest(helpers, originOf(c.req.url), c.req.valid("json").query);
    await assertKnownScopes(request);
    const consent = await helpers.describeConsent(request);
    const workspaces = p.bootstrap
      ? await listWorkspaces(c.env)
      : [await getWorkspace(c.env, p.workspaceId)].filter((w) => w !== undefined && w !== null);
    return c.json(
      {
        client_id: consent.clientId,
        client_name: consent.clientName,
        client_uri: consent.clientUri ?? null,
        redirect_uri: consent.redirectUri,
        redirect_host: consent.redirectHost,
        redirect_is_loopback: consent.redirectIsLoopback,
        requested_scopes: consent.scope,
        grantable_scopes: grantableScopes(p),
        workspaces: workspaces.map((w) => ({ id: w.id, name: w.name })),
      },
      200,
    );
  })
  .openapi(authorizeRoute, async (c) => {
    const p = c.get("principal");
    const body = c.req.valid("json");
    const origin = originOf(c.req.url);
    const helpers = await oauthHelpers(c.env, origin);
    const request = await parseRequest(helpers, origin, body.query);
    await assertKnownScopes(request);
    const beyond = body.scopes.filter((s) => !hasScope(p, s));
    if (beyond.length > 0) throw new AppError("forbidden", `You cannot grant scope(s) beyond your own: ${beyond.join(", ")}`);
    const workspaceId = await grantedWorkspace(c.env, p, body.workspace_id);
    const scopes = [...new Set(body.scopes)];
    const props: McpProps = { kind: "oauth_grant", workspace_id: workspaceId, scopes, approved_by: p.tokenId };
    const { redirectTo } = await helpers.completeAuthorization({
      request,
      userId: workspaceId,
      scope: scopes,
      props,
      metadata: { approved_by: p.tokenId },
    });
    return c.json({ redirect_to: redirectTo }, 200);
  })
  .openapi(denyRoute, async (c) => {
    const origin = originOf(c.req.url);
    const request = await parseRequest(await oauthHelpers(c.env, origin), origin, c.req.valid("json").query);
    const { authorizationErrorRedirect } = await oauthLibrary();
    return c.json({ redirect_to: authorizationErrorRedirect(request, "access_denied", "The user declined") }, 200);
  })
  .openapi(listGrantsRoute, async (c) => {
    const p = c.get("principal");
    const helpers = await oauthHelpers(c.env, originOf(c.req.url));
    const grants: z.infer<typeof Grant>[] = [];
    let cursor: string | undefined;
    do {
      const page = await helpers.listUserGrants(p.workspaceId, cursor === undefined ? {} : { cursor });
      for (const g of page.items) {
        const metadata = (g.metadata ?? {}) as { approved_by?: unknown };
        // A grant whose approving API token was revoked without the revocation reaching it (revoked before
        // revocation ended grants, or a cleanup that failed) is refused on /mcp already; it ends here too.
        if (typeof metadata.approved_by === "string" && !(await tokenIsLive(c.env, metadata.approved_by))) {
          await helpers.revokeGrant(g.id, p.workspaceId);
          continue;
        }
        const client = await helpers.lookupClient(g.clientId);
        grants.push({
          id: g.id,
          client_id: g.clientId,
          client_name: client?.clientName ?? null,
          scopes: g.scope,
          approved_by: typeof metadata.approved_by === "string" ? metadata.approved_by : null,
          created_at: g.createdAt,
          expires_at: g.expiresAt ?? null,
        });
      }
      cursor = page.cursor;
    } while (cursor !== undefined && grants.length < 1000);
    return c.json({ grants }, 200);
  })
  .openapi(revokeGrantRoute, async (c) => {
    const p = c.get("principal");
    const { id } = c.req.valid("param");
    // Grants are keyed by workspace (the library's userId): another workspace's grant is simply not found here.
    const grant = await c.env.OAUTH_KV?.get(`grant:${p.workspaceId}:${id}`);
    if (id.includes(":") || !grant) throw notFound("Grant");
    await (await oauthHelpers(c.env, originOf(c.req.url))).revokeGrant(id, p.workspaceId);
    return c.json({ id, revoked: true as const }, 200);
  });
