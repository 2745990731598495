/**
 * The Hono application: middleware order (errors → request id and log context → body limits → auth), one router per resource,
 * and the OpenAPI 3.1 document generated from the routes' zod schemas.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { AppError } from "../../kernel/errors.ts";
import { errorResponseFor } from "./openai/errors.ts";
import { corsFor } from "./cors.ts";
import { requestContext } from "./request-context.ts";
import { securityHeaders } from "./security-headers.ts";
import { authenticate } from "./auth.ts";
import { bodyLimits } from "./body-limit.ts";
import { parseJsonBodies } from "./json-body.ts";
import { pingRoutes, VERSION } from "./routes/ping.ts";
import { workspaceRoutes } from "./routes/workspaces.ts";
import { tokenRoutes } from "./routes/tokens.ts";
import { configRoutes } from "./routes/config.ts";
import { secretRoutes } from "./routes/secrets.ts";
import { skillRoutes } from "./routes/skills.ts";
import { pluginRoutes } from "./routes/plugins.ts";
import { draftRoutes } from "./routes/drafts.ts";
import { candidateRoutes } from "./routes/candidates.ts";
import { skillStatsRoutes } from "./routes/skill-stats.ts";
import { runReceiptRoutes } from "./routes/run-receipts.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { sessionAdminRoutes } from "./routes/session-admin.ts";
import { sessionLifecycleRoutes } from "./routes/session-lifecycle.ts";
import { messageRoutes } from "./routes/session-messages.ts";
import { streamRoutes } from "./routes/session-stream.ts";
import { approvalRoutes } from "./routes/session-approvals.ts";
import { fileRoutes } from "./routes/session-files.ts";
import { chatRoutes } from "./routes/chat.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { teamRoutes } from "./routes/teams.ts";
import { agentRoutes } from "./routes/agents.ts";
import { toolchainRoutes } from "./routes/toolchain.ts";
import { mailRoutes } from "./routes/mail.ts";
import { memoryRoutes } from "./routes/memory.ts";
import { scheduleRoutes } from "./routes/schedules.ts";
import { mcpRoutes } from "./routes/mcp.ts";
import { mcpEndpointRoutes } from "./routes/mcp-endpoint.ts";
import { draftEvaluationRoutes } from "./routes/draft-evaluation.ts";
import { openAiRoutes } from "./routes/openai.ts";
import { uiChatRoutes } from "./routes/ui-chat.ts";
import { usageRoutes } from "./routes/usage.ts";
import { oauthRoutes } from "./routes/oauth.ts";
import { mcpOAuthRoutes } from "./routes/mcp-oauth.ts";

/** Routes under /api that need no bearer token (they authenticate otherwise, or not at all). */
export function isPublicApiPath(path: string): boolean {
  return (
    path === "/api/ping" ||
    path === "/api/openapi.json" ||
    // Authorization servers fetch Beaver's OAuth client ID metadata document (routes/mcp-oauth.ts).
    path === "/api/mcp/client-metadata.json" ||
    /^\/api\/sessions\/[^/]+\/stream$/.test(path)
  );
}

export function createApp() {
  const app = new OpenAPIHono<AppEnv>();
  // Errors in Beaver's shape, except under /v1 where OpenAI clients expect OpenAI's (docs/openai-api.md).
  app.onError(errorResponseFor);
  app.notFound((c) => errorResponseFor(new AppError("not_found", `No route for ${c.req.method} ${c.req.path}`), c));

  app.use("*", requestContext);
  // After the request context, so error answers (made by onError inside it) get the headers too.
  app.use("*", securityHeaders);
  // Before auth, so a browser's preflight is answered without a token; off unless BEAVER_CORS_ORIGINS is set (docs/cors.md).
  app.use("*", corsFor);
  app.use("*", bodyLimits);
  app.use("/api/*", async (c, next) => {
    if (isPublicApiPath(c.req.path)) return next();
    return authenticate(c, next);
  });
  app.use("/api/*", parseJsonBodies);
  app.use("/v1/*", authenticate);
  app.use("/v1/*", parseJsonBodies);

  app.route("/api/ping", pingRoutes);
  app.route("/api/workspaces", workspaceRoutes);
  app.route("/api/tokens", tokenRoutes);
  app.route("/api/config", configRoutes);
  app.route("/api/secrets", secretRoutes);
  app.route("/api/skills", skillRoutes);
  app.route("/api/skills", skillStatsRoutes);
  app.route("/api/plugins", pluginRoutes);
  app.route("/api/drafts", draftRoutes);
  app.route("/api/candidates", candidateRoutes);
  app.route("/api/sessions", streamRoutes);
  app.route("/api/sessions", messageRoutes);
  app.route("/api/sessions", approvalRoutes);
  app.route("/api/sessions", runReceiptRoutes);
  app.route("/api/sessions", fileRoutes);
  app.route("/api/sessions", sessionRoutes);
  app.route("/api/sessions", sessionAdminRoutes);
  app.route("/api/sessions", sessionLifecycleRoutes);
  app.route("/api/chat", chatRoutes);
  app.route("/api/agents", agentRoutes);
  app.route("/api/teams", teamRoutes);
  app.route("/api/toolchain", toolchainRoutes);
  app.route("/api/mail", mailRoutes);
  app.route("/api/memory", memoryRoutes);
  app.route("/api/schedules", scheduleRoutes);
  app.route("/api/mcp", mcpRoutes);
  app.route("/api/mcp", mcpOAuthRoutes);
  app.route("/api/usage", usageRoutes);
  app.route("/api/oauth", oauthRoutes);
  // Beaver's MCP server (docs/mcp.md): bearer tokens as under /api, or OAuth grants (edge/oauth/provider.ts, which
  // authenticates before the app); its tools call the routes above in-process.
  app.use("/mcp", authenticate);
  app.route(
    "/mcp",
    mcpEndpointRoutes((request, env, ctx) => app.fetch(request, env, ctx)),
  );
  app.route("/api/drafts", draftEvaluationRoutes);
  // The OpenAI-compatible API: bearer tokens like /api, errors in OpenAI's shape.
  app.route("/v1", openAiRoutes);
  app.route("/api/ui/chat", uiChatRoutes);
  // Outside /api: no bearer token; the webhook's HMAC signature authenticates it.
  app.route("/webhooks", webhookRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  app.doc31("/api/openapi.json", {
    openapi: "3.1.0",
    info: { title: "Beaver", version: VERSION, description: "Agent harness on Cloudflare Workers" },
    security: [{ bearer: [] }],
  });
  return app;
}
