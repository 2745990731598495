/**
 * Tool approval across a crash (docs/approvals.md): a run paused on a `require_approval` tool on a
 * private `wrangler dev`, which is then killed (SIGKILL) and restarted on the same persisted state;
 * approving over HTTP afterwards runs the tool and the run reaches its answer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

let dev: DevServer | undefined;
let persistTo: string | undefined;

afterAll(async () => {
  await dev?.stop();
  if (persistTo) rmSync(persistTo, { recursive: true, force: true });
});

async function call(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetch(`${dev!.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("tool approval across a wrangler dev restart", () => {
  it("a require_approval tool pauses the run; after a crash and restart, approving continues it to its answer", async () => {
    persistTo = mkdtempSync(join(tmpdir(), "beaver-approval-"));
    dev = await startWranglerDev({ persistTo });
    const admin = dev.adminToken;

    const modelId = `approval-restart-${Math.random().toString(36).slice(2, 8)}`;
    await models.script(modelId, [{ tool_calls: [{ name: "echo", arguments: { text: "released 1.0" } }] }, { text: "release done" }]);
    expect(
      (
        await call("PUT", "/api/config", admin, {
          model: { provider: "openai-compatible", id: modelId, base_url: `${modelUrl}/v1` },
          tool_policy: [{ match: "echo", action: "require_approval" }],
        })
      ).status,
    ).toBe(200);
    const created = await call("POST", "/api/sessions", admin, {});
    const sessionId = ((await created.json()) as { id: string }).id;
    const submitted = await call("POST", `/api/sessions/${sessionId}/messages`, admin, { content: "cut the release" });
    expect(submitted.status).toBe(202);
    const { run_id } = (await submitted.json()) as { run_id: string };

    // The request is in the session's log (the transcript reads the DO's own copy).
    const approvalId = await eventually(async () => {
      const res = await call("GET", `/api/sessions/${sessionId}/transcript`, admin);
      const { items } = (await res.json()) as { items: { notice?: string; details?: Record<string, unknown> }[] };
      const item = items.find((i) => i.notice === "approval" && i.details?.expires_at !== undefined);
      return item?.details?.approval_id as string | undefined;
    });

    await dev.kill();
    dev = await startWranglerDev({ persistTo, adminToken: admin });

    const waiting = (await (await call("GET", `/api/sessions/${sessionId}/runs/${run_id}`, admin)).json()) as { status: string };
    expect(waiting.status).toBe("running");
    const decided = await call("POST", `/api/sessions/${sessionId}/approvals/${approvalId}`, admin, { decision: "approve" });
    expect(decided.status).toBe(200);
    expect((await call("POST", `/api/sessions/${sessionId}/approvals/${approvalId}`, admin, { decision: "deny" })).status).toBe(409);

    const result = await eventually(async () => {
      const run = (await (await call("GET", `/api/sessions/${sessionId}/runs/${run_id}`, admin)).json()) as {
        status: string;
        result: { output_text: string };
      };
      return run.status === "running" || run.status === "queued" ? undefined : run;
    });
    expect(result).toMatchObject({ status: "completed", result: { output_text: "release done" } });
    const requests = await models.requests(modelId);
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body.messages)).toContain("released 1.0");
  });
});
