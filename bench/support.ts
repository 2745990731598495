/**
 * What every benchmark against `wrangler dev` needs: the bench Worker started, a client that fails
 * loudly on an error status, and a fresh workspace with an admin token.
 */
import { performance } from "node:perf_hooks";
import { startWranglerDev, type DevServer, type StartOptions } from "../test/support/wrangler-dev.ts";
import type { ScriptedStep, scriptedModelClient } from "../test/support/scripted-openai.ts";

/** `wrangler dev` of the bench Worker (bench/wrangler.toml: production plus the bench-only routes). */
export function startBenchWorker(opts: Omit<StartOptions, "config"> = {}): Promise<DevServer> {
  return startWranglerDev({ ...opts, config: "bench/wrangler.toml" });
}

export type BenchCall = (method: string, path: string, token: string, body?: unknown) => Promise<Response>;

/** JSON in, Response out; any status from 300 up throws with the answer's text. */
export function benchClient(dev: DevServer): BenchCall {
  return async (method, path, token, body) => {
    const res = await fetch(`${dev.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res;
  };
}

/** A new workspace created with the bootstrap token; returns its id and an admin token for it. */
export async function benchWorkspace(dev: DevServer, call: BenchCall): Promise<{ id: string; token: string }> {
  const id = `bench-${Math.random().toString(36).slice(2, 8)}`;
  await call("POST", "/api/workspaces", dev.adminToken, { id, name: id });
  const res = await call("POST", "/api/tokens", dev.adminToken, { name: "bench", scopes: ["admin"], workspace_id: id });
  return { id, token: ((await res.json()) as { token: string }).token };
}

/**
 * One timed turn of the `code` tool set: scripts the model's steps, sends a message with `?wait=true`
 * and returns its wall time in ms; a turn that does not complete throws.
 */
export async function timedCodeTurn(
  call: BenchCall,
  token: string,
  models: ReturnType<typeof scriptedModelClient>,
  modelId: string,
  sessionId: string,
  steps: ScriptedStep[],
): Promise<number> {
  await models.script(modelId, steps);
  const t0 = performance.now();
  const res = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, token, { content: "go", toolset: "code" });
  const body = (await res.json()) as { status: string };
  if (body.status !== "completed") throw new Error(`turn ended ${body.status}`);
  return performance.now() - t0;
}
