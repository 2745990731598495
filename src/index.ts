/**
 * Worker entry: the Hono app for HTTP, the cron `scheduled` handler, and the Durable Object classes.
 */
import type { Env } from "./storage/env.ts";
import { createApp } from "./edge/http/app.ts";
import { runScheduled } from "./edge/scheduled.ts";

export { SessionDO } from "./runtime/session/session-do.ts";
export { WorkspaceDO } from "./domains/governance/workspace-do.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
