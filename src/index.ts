/**
 * Worker entry: the Hono app for HTTP, the cron `scheduled` handler, and the Durable Object classes,
 * all built from the composition root (src/app/, docs/layering.md).
 */
import type { Env } from "./storage/env.ts";
import { createApp } from "./edge/http/app.ts";
import { runScheduled } from "./edge/scheduled.ts";

export { SessionDO, WorkspaceDO, ScheduleDO, EvaluationDO } from "./edge/durable-objects.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  async scheduled(controller, env, ctx) {
    ctx.waitUntil(runScheduled(env, controller.scheduledTime));
  },
} satisfies ExportedHandler<Env>;
