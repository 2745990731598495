/**
 * Worker entry: the Hono app for HTTP, the cron `scheduled` handler, and the Durable Object classes.
 */
import type { Env } from "./env.ts";
import { createApp } from "./http/app.ts";
import { runScheduled } from "./scheduled.ts";

export { SessionDO } from "./session/session-do.ts";
export { WorkspaceDO } from "./workspace/workspace-do.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
