/**
 * Who is calling `/mcp` once the OAuth provider (provider.ts) has checked the bearer token: the props
 * a grant carries become a `Principal` like any API token's, so the MCP tools' in-process calls to
 * Beaver's own routes run with the grant's workspace and scopes. The principal travels with the
 * request's ExecutionContext (one per incoming request, passed along by the in-process calls) in a
 * WeakMap no client can write to, never in a header a caller could forge.
 */
import { SCOPES, type Principal, type Scope } from "../http/context.ts";

/** What the provider hands the `/mcp` handler as `ctx.props`. */
export type McpProps =
  /** A static API token, resolved by `resolveExternalToken`. */
  | { kind: "api_token"; principal: Principal }
  /** An OAuth grant approved in the console (routes/oauth.ts). */
  | { kind: "oauth_grant"; workspace_id: string; scopes: Scope[]; approved_by: string };

const principals = new WeakMap<object, Principal>();

export function markPrincipal(ctx: object, principal: Principal): void {
  principals.set(ctx, principal);
}

/** The principal the OAuth provider attached to this incoming request's context. */
export function markedPrincipal(ctx: object | undefined): Principal | undefined {
  return ctx ? principals.get(ctx) : undefined;
}

/** The grant id inside one of the provider's tokens (`<userId>:<grantId>:<secret>`). */
function grantIdOf(token: string | undefined): string {
  return token?.split(":")[1] ?? "unknown";
}

export function principalFromProps(props: McpProps, token: string | undefined): Principal | null {
  if (props.kind === "api_token") return props.principal;
  if (props.kind !== "oauth_grant") return null;
  const scopes = props.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s) && s !== "admin");
  return { workspaceId: props.workspace_id, tokenId: `grant:${grantIdOf(token)}`, scopes, bootstrap: false };
}
