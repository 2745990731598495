/**
 * An OAuth-protected MCP server for e2e tests of Beaver's MCP client (docs/mcp.md, "Connect a hosted
 * MCP server"), built only from the MCP SDK's own pieces, on one loopback port:
 * - the authorization server: the SDK's `mcpAuthRouter` (RFC 8414 metadata, RFC 9728 metadata for
 *   `/mcp`, RFC 7591 registration, authorize, token with PKCE) over the SDK's
 *   `DemoInMemoryAuthProvider` (shipped in `@modelcontextprotocol/sdk/examples`), whose `authorize`
 *   is replaced by an approval page with one Approve button, as a hosted server's consent page;
 * - the resource server: `requireBearerAuth` (audience bound to `/mcp`) in front of a stateless
 *   Streamable HTTP `McpServer` with one tool, `lookup`, which answers with the client the token was
 *   issued to, so a test sees the call went through with Beaver's token.
 * `revokeAll()` forgets every issued access token, as an authorization server revoking the grant.
 */
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import { z } from "zod";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import type { AuthorizationParams } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthClientInformationFull } from "@modelcontextprotocol/sdk/shared/auth.js";
import { DemoInMemoryAuthProvider } from "@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js";
import { freePort } from "./wrangler-dev.ts";

/** What the express response of `authorize` offers (the SDK types it with express's `Response`). */
interface PageResponse {
  type(kind: string): PageResponse;
  send(body: string): void;
}

/** The demo provider with a consent page: a code is issued only when the page's Approve is pressed. */
class ApprovingProvider extends DemoInMemoryAuthProvider {
  readonly pending = new Map<string, { client: OAuthClientInformationFull; params: AuthorizationParams }>();

  override async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: unknown): Promise<void> {
    if (!client.redirect_uris.includes(params.redirectUri)) throw new Error("Unregistered redirect_uri");
    const id = randomUUID();
    this.pending.set(id, { client, params });
    const page = res as PageResponse;
    page
      .type("html")
      .send(
        `<!doctype html><title>Authorize</title><h1>Authorize <span id="client">${client.client_name ?? client.client_id}</span></h1>` +
          `<form method="get" action="/approve"><input type="hidden" name="id" value="${id}"><button type="submit">Approve</button></form>`,
      );
  }

  /** The Approve button: a code for the pending request, sent back to the client's redirect URI. */
  approve(id: string): string {
    const request = this.pending.get(id);
    if (!request) throw new Error("unknown authorization request");
    this.pending.delete(id);
    const code = randomUUID();
    // The demo provider keeps codes in a private map; its token exchange reads them from there.
    (this as unknown as { codes: Map<string, unknown> }).codes.set(code, request);
    const back = new URL(request.params.redirectUri);
    back.searchParams.set("code", code);
    if (request.params.state !== undefined) back.searchParams.set("state", request.params.state);
    return back.href;
  }

  /**
   * The demo's check throws a plain Error for an unknown token, which `requireBearerAuth` answers with
   * 500; an authorization server's refusal is `InvalidTokenError` (401 invalid_token, RFC 6750).
   */
  override async verifyAccessToken(token: string): Promise<AuthInfo> {
    try {
      return await super.verifyAccessToken(token);
    } catch (err) {
      throw new InvalidTokenError(err instanceof Error ? err.message : String(err));
    }
  }

  /** Forgets every issued access token: the next request with one is refused (401 invalid_token). */
  revokeAll(): void {
    (this as unknown as { tokens: Map<string, unknown> }).tokens.clear();
  }
}

export interface OAuthMcpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  revokeAll(): void;
  /** How many times `lookup` ran. */
  calls(): number;
  stop(): Promise<void>;
}

export async function startOAuthMcpServer(): Promise<OAuthMcpServer> {
  const port = await freePort();
  const origin = new URL(`http://127.0.0.1:${port}/`);
  const mcpUrl = new URL("/mcp", origin);
  const provider = new ApprovingProvider((resource) => resource?.href === mcpUrl.href);
  let calls = 0;

  const app = createMcpExpressApp({ host: "127.0.0.1" });
  app.use(mcpAuthRouter({ provider, issuerUrl: origin, resourceServerUrl: mcpUrl, scopesSupported: ["tickets"] }));
  app.get("/approve", (req: { query: { id?: string } }, res: { redirect(url: string): void }) =>
    res.redirect(provider.approve(String(req.query.id ?? ""))),
  );
  app.post(
    "/mcp",
    requireBearerAuth({
      verifier: provider,
      expectedResource: mcpUrl,
      resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    }),
    async (req: { body: unknown }, res: { on(event: string, fn: () => void): void }) => {
      const server = new McpServer({ name: "tickets", version: "1.0.0" });
      server.registerTool(
        "lookup",
        { description: "Looks a ticket up by number", inputSchema: { id: z.number().int() }, annotations: { readOnlyHint: true } },
        ({ id }, extra) => {
          calls++;
          return { content: [{ type: "text", text: `ticket ${id}: fix the dam (for client ${extra.authInfo?.clientId})` }] };
        },
      );
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req as never, res as never, req.body);
    },
  );
  const http: Server = await new Promise((ok) => {
    const s = app.listen(port, "127.0.0.1", () => ok(s));
  });
  return {
    url: mcpUrl.href,
    revokeAll: () => provider.revokeAll(),
    calls: () => calls,
    stop: () =>
      new Promise<void>((ok) => {
        http.close(() => ok());
        // Beaver keeps its connections alive; without this, close waits for them to time out.
        http.closeAllConnections();
      }),
  };
}
