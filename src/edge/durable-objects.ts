/**
 * The Durable Object classes the Worker exports (wrangler.toml binds them by these names): each is
 * the runtime's or a domain's object, built with what the composition root registered.
 */
import type { Env } from "../storage/env.ts";
import { SessionObject } from "../runtime/index.ts";
import { runtimeServices } from "../app/runtime.ts";
import { EvaluationObject } from "../domains/learning/evaluation/evaluation-do.ts";
import { evaluationOptions } from "../app/evaluation.ts";

export class SessionDO extends SessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, runtimeServices());
  }
}

export { WorkspaceDO } from "../domains/governance/workspace-do.ts";
export { ScheduleObject as ScheduleDO } from "../domains/schedules/schedule-do.ts";

export class EvaluationDO extends EvaluationObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, evaluationOptions());
  }
}
