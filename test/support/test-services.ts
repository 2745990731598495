/**
 * What in-worker tests hand the Worker under test (test/support/worker.ts, the vitest `main`): mock
 * models, injected replication faults, extra tool sets and an outbound fetch (a fake Gitea). Tests
 * and the Worker share one isolate, so a test sets these before it drives a run; `resetTestServices`
 * puts the production behaviour back. Nothing here is part of the production Worker.
 */
import type { ModelFactory } from "../../src/runtime/agent/providers.ts";
import type { ReplicationFault } from "../../src/runtime/session/replicator.ts";
import type { ToolsetFactory } from "../../src/runtime/services.ts";
import type { Extension } from "../../src/runtime/extensions.ts";
import type { FetchFn } from "../../src/storage/outbound.ts";
import type { Env } from "../../src/storage/env.ts";
import type { EmbeddingFactory } from "../../src/domains/skills/embeddings.ts";
import { WriteLock } from "../../src/domains/governance/lock.ts";

export const testServices = {
  /** Replaces the provider packages when set (secrets are still resolved and checked first). */
  modelFactory: null as ModelFactory | null,
  /** Replaces the provider packages for `embedding_model` when set. */
  embeddingFactory: null as EmbeddingFactory | null,
  replicationFault: null as ReplicationFault | null,
  /** Tool sets added to the registered ones (a test's own tools). */
  toolsets: new Map<string, ToolsetFactory>(),
  /** Where outbound HTTP goes (the `OUTBOUND` binding of storage/outbound.ts). */
  outbound: null as FetchFn | null,
  /** How long explicit workspace-lock operations wait (`BEAVER_LOCK_WAIT_MS` of `testEnv`; production default when null). */
  lockWaitMs: null as number | null,
  /** Overrides the Worker var `BEAVER_ALLOW_PRIVATE_EGRESS` (storage/egress.ts) when set. */
  allowPrivateEgress: null as boolean | null,
  /** Each WorkspaceDO's write lock, by object id, shared with the object so a test can hold it. */
  workspaceLocks: new Map<string, WriteLock>(),
  /** The Worker's `BEAVER_LIMITS` while set (storage/limits.ts): a test lowers a limit or quota. */
  limits: null as Record<string, number> | null,
  /** Extensions added after the registered ones (a test's own hooks and subscribers; docs/extensions.md). */
  extensions: [] as Extension[],
};

/** The write lock of the WorkspaceDO with this id (the object uses the same one once it exists). */
export function workspaceLock(id: DurableObjectId): WriteLock {
  const key = id.toString();
  let lock = testServices.workspaceLocks.get(key);
  if (!lock) testServices.workspaceLocks.set(key, (lock = new WriteLock()));
  return lock;
}

export function setTestModelFactory(factory: ModelFactory | null): void {
  testServices.modelFactory = factory;
}

export function setReplicationFault(fault: ReplicationFault | null): void {
  testServices.replicationFault = fault;
}

export function setOutboundFetch(fetch: FetchFn | null): void {
  testServices.outbound = fetch;
}

/** Sets (or with null clears) the operator's limit overrides the Worker sees. */
export function setTestLimits(limits: Record<string, number> | null): void {
  testServices.limits = limits;
}

/**
 * The Worker's environment plus an `OUTBOUND` binding, `BEAVER_LIMITS`, `BEAVER_ALLOW_PRIVATE_EGRESS` and
 * `BEAVER_LOCK_WAIT_MS` that follow `testServices`.
 */
export function testEnv(env: Env): Env {
  const out: Env = { ...env };
  Object.defineProperty(out, "BEAVER_LIMITS", {
    enumerable: true,
    get: () => testServices.limits ?? env.BEAVER_LIMITS,
  });
  Object.defineProperty(out, "OUTBOUND", {
    enumerable: true,
    get: () => (testServices.outbound ? { fetch: testServices.outbound } : env.OUTBOUND),
  });
  Object.defineProperty(out, "BEAVER_ALLOW_PRIVATE_EGRESS", {
    enumerable: true,
    get: () => (testServices.allowPrivateEgress === null ? env.BEAVER_ALLOW_PRIVATE_EGRESS : String(testServices.allowPrivateEgress)),
  });
  Object.defineProperty(out, "BEAVER_LOCK_WAIT_MS", {
    enumerable: true,
    get: () => (testServices.lockWaitMs === null ? env.BEAVER_LOCK_WAIT_MS : String(testServices.lockWaitMs)),
  });
  return out;
}
