/**
 * Worker entry: the Hono app for HTTP, the cron `scheduled` handler, and the Durable Object classes,
 * all built from the composition root (src/app/, docs/layering.md).
 */
import type { Env } from "./storage/env.ts";
import { createApp } from "./edge/http/app.ts";
import { runScheduled } from "./edge/scheduled.ts";
import { withOAuth } from "./edge/oauth/provider.ts";

export { SessionDO, WorkspaceDO, ScheduleDO, EvaluationDO } from "./edge/durable-objects.ts";

const app = createApp();
// `/mcp` behind OAuth 2.1 (docs/mcp.md, "Add Beaver to your assistant"); every other path reaches the app as before.
const handler = withOAuth(app);

export default {
  fetch: (request, env, ctx) => handler.fetch(request, env, ctx),
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
