/**
 * The Worker the in-worker tests run (vitest.config.ts `main`): the production entry point, with the
 * runtime services and the environment taken from test/support/test-services.ts so a test can choose
 * models, faults, tool sets and where outbound HTTP goes. Production code carries no test seam.
 */
import production from "../../src/index.ts";
import { SessionObject } from "../../src/runtime/session/session-object.ts";
import { WorkspaceDO as ProductionWorkspaceDO, ScheduleDO as ProductionScheduleDO } from "../../src/edge/durable-objects.ts";
import { EvaluationObject } from "../../src/domains/learning/evaluation/evaluation-do.ts";
import { providerModel } from "../../src/runtime/agent/providers.ts";
import { runtimeServices } from "../../src/app/runtime.ts";
import { evaluationOptions } from "../../src/app/evaluation.ts";
import { providerEmbeddingModel } from "../../src/domains/skills/embeddings.ts";
import type { RuntimeServices } from "../../src/runtime/services.ts";
import type { Env } from "../../src/storage/env.ts";
import { testEnv, testServices, workspaceLock } from "./test-services.ts";

/** Production services, overridden at call time by whatever the running test set. */
function servicesForTests(): RuntimeServices {
  const base = runtimeServices({
    skills: { embeddingFactory: (entry, build) => (testServices.embeddingFactory ?? providerEmbeddingModel)(entry, build) },
  });
  return {
    get toolsets() {
      return new Map([...base.toolsets, ...testServices.toolsets]);
    },
    modelFactory: (entry, build) => (testServices.modelFactory ?? base.modelFactory)(entry, build),
    replicationFault: (sessionId) => testServices.replicationFault?.(sessionId) ?? false,
    ...(base.skills ? { skills: base.skills } : {}),
    ...(base.memory ? { memory: base.memory } : {}),
    ...(base.toolSources ? { toolSources: base.toolSources } : {}),
    ...(base.embedder ? { embedder: base.embedder } : {}),
    ...(base.drivers ? { drivers: base.drivers } : {}),
    get extensions() {
      return [...(base.extensions ?? []), ...testServices.extensions];
    },
  };
}

export class SessionDO extends SessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, testEnv(env), servicesForTests());
  }
}

export class WorkspaceDO extends ProductionWorkspaceDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, testEnv(env), { lock: workspaceLock(ctx.id) });
  }
}

export class ScheduleDO extends ProductionScheduleDO {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, testEnv(env));
  }
}

/** The production EvaluationDO (src/app/evaluation.ts) with the judge's models following the test's model factory, like the runs'. */
export class EvaluationDO extends EvaluationObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(
      ctx,
      testEnv(env),
      evaluationOptions((entry, build) => (testServices.modelFactory ?? providerModel)(entry, build)),
    );
  }
}

export default {
  fetch: (request, env, ctx) => production.fetch(request, testEnv(env), ctx),
  scheduled: (controller, env, ctx) => production.scheduled(controller, testEnv(env), ctx),
} satisfies ExportedHandler<Env>;
