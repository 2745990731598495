import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json } from "../../support/api.ts";
import { hmacSha256Hex } from "../../../src/kernel/hash.ts";
import { intakeWebhook } from "../../../src/domains/toolchain/intake.ts";
import { fixture } from "../../support/toolchain-fixtures.ts";
import { anotherEvent, deliverOk, getTask, listTasks, toolchainWorkspace, WEBHOOK_SECRET } from "../../support/toolchain-setup.ts";

type Err = { error: { code: string; message: string; details?: { path: string; message: string }[] } };

async function seed() {
  const ws = await toolchainWorkspace();
  await deliverOk(ws.id, "pull_request", fixture("HookPullRequest"));
  await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
  await deliverOk(ws.id, "status", fixture("status_deploy_error"));
  return ws;
}

describe("/api/toolchain/tasks", () => {
  it("lists and filters by status, agent, action type and repository, newest first, with a cursor", async () => {
    const ws = await seed();
    const all = await listTasks(ws.read);
    expect(all.map((t) => t.action_type)).toEqual(["deploy_failure", "issue_assigned", "review_request"]);
    expect((await listTasks(ws.read, "?agent_id=jony")).map((t) => t.action_type)).toEqual(["issue_assigned"]);
    expect((await listTasks(ws.read, "?action_type=deploy_failure")).map((t) => t.agent_id)).toEqual(["ops"]);
    expect((await listTasks(ws.read, "?repo=gordon/hello-world")).map((t) => t.number)).toEqual([1]);
    expect(await listTasks(ws.read, "?status=done")).toEqual([]);
    const page = await json<{ tasks: unknown[]; next_before: number | null }>(
      await call("GET", "/api/toolchain/tasks?limit=2", { token: ws.read }),
    );
    expect(page.tasks).toHaveLength(2);
    expect(page.next_before).not.toBeNull();
    expect((await call("GET", "/api/toolchain/tasks?status=nope", { token: ws.read })).status).toBe(400);
    expect((await call("GET", "/api/toolchain/tasks?limit=0", { token: ws.read })).status).toBe(400);
  });

  it("pages through tasks and deliveries created in the same millisecond without losing any", async () => {
    const ws = await toolchainWorkspace();
    const now = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const payload = JSON.parse(fixture("issue_assign")) as { issue: Record<string, unknown> };
      payload.issue = { ...payload.issue, number: 100 + i };
      const body = new TextEncoder().encode(JSON.stringify(payload));
      const headers = new Headers({
        "X-Gitea-Event-Type": "issue_assign",
        "X-Gitea-Delivery": `same-ms-${i}`,
        "X-Gitea-Signature": await hmacSha256Hex(WEBHOOK_SECRET, body),
      });
      const result = await intakeWebhook(env, { workspaceId: ws.id, headers, body }, now);
      // Settled in its one write: the task exists when intake answers.
      if (result.kind !== "settled") throw new Error(`intake answered ${result.kind}`);
      ids.push(...result.delivery.task_ids);
    }
    expect(ids).toHaveLength(5);
    const pages = async (path: string, key: "tasks" | "deliveries", id: (row: Record<string, unknown>) => string) => {
      const seen: string[] = [];
      let cursor = "";
      for (let guard = 0; guard < 10; guard++) {
        const page = await json<Record<string, unknown>>(await call("GET", `${path}?limit=2${cursor}`, { token: ws.read }));
        seen.push(...(page[key] as Record<string, unknown>[]).map(id));
        if (page.next_before === null) break;
        cursor = `&before=${page.next_before as number}&before_id=${encodeURIComponent(page.next_before_id as string)}`;
      }
      return seen;
    };
    expect((await pages("/api/toolchain/tasks", "tasks", (t) => t.id as string)).sort()).toEqual([...ids].sort());
    expect((await pages("/api/toolchain/deliveries", "deliveries", (d) => d.delivery_id as string)).sort()).toEqual([
      "same-ms-0",
      "same-ms-1",
      "same-ms-2",
      "same-ms-3",
      "same-ms-4",
    ]);
  });

  it("adds comments (types validated in code) and outputs, shown with the task", async () => {
    const ws = await seed();
    const [task] = await listTasks(ws.read, "?agent_id=jony");
    const ok = await call("POST", `/api/toolchain/tasks/${task!.id}/comments`, {
      token: ws.member,
      body: { body: "Started on the endpoint", comment_type: "observation", author: "jony" },
    });
    expect(ok.status).toBe(201);
    const report = await call("POST", `/api/toolchain/tasks/${task!.id}/comments`, {
      token: ws.member,
      body: { body: "Done: PR #14", comment_type: "action_report", author: "jony" },
    });
    expect(report.status).toBe(201);
    const bad = await call("POST", `/api/toolchain/tasks/${task!.id}/comments`, {
      token: ws.member,
      body: { body: "x", comment_type: "gossip" },
    });
    expect(bad.status).toBe(400);
    expect((await json<Err>(bad)).error.details?.[0]?.path).toBe("comment_type");
    const system = await call("POST", `/api/toolchain/tasks/${task!.id}/comments`, {
      token: ws.member,
      body: { body: "x", author: "system" },
    });
    expect(system.status).toBe(400);
    expect(
      (await call("POST", `/api/toolchain/tasks/${task!.id}/outputs`, { token: ws.member, body: { content: "plan", type: "markdown" } }))
        .status,
    ).toBe(201);
    const detail = await getTask(ws.read, task!.id);
    expect(detail.comments.map((c) => [c.author, c.comment_type])).toEqual([
      ["jony", "observation"],
      ["jony", "action_report"],
    ]);
    expect(detail.outputs).toMatchObject([{ type: "markdown", content: "plan" }]);
    expect((await call("POST", `/api/toolchain/tasks/${task!.id}/comments`, { token: ws.read, body: { body: "x" } })).status).toBe(403);
    const big = await call("POST", `/api/toolchain/tasks/${task!.id}/outputs`, {
      token: ws.member,
      rawBody: JSON.stringify({ content: "x".repeat(1_100_000) }),
      headers: { "Content-Type": "application/json" },
    });
    expect(big.status).toBe(413);
    expect(
      (
        await call("POST", `/api/toolchain/tasks/${task!.id}/outputs`, {
          token: ws.member,
          rawBody: "content=x",
          headers: { "Content-Type": "text/plain" },
        })
      ).status,
    ).toBe(415);
  });

  it("cancels open tasks and retries failed or cancelled ones; anything else is 409", async () => {
    const ws = await seed();
    const [task] = await listTasks(ws.read, "?agent_id=ops");
    expect((await call("POST", `/api/toolchain/tasks/${task!.id}/retry`, { token: ws.member })).status).toBe(409);
    const cancelled = await call("POST", `/api/toolchain/tasks/${task!.id}/cancel`, { token: ws.member });
    expect(cancelled.status).toBe(200);
    expect(await json(cancelled)).toMatchObject({ status: "cancelled" });
    expect((await call("POST", `/api/toolchain/tasks/${task!.id}/cancel`, { token: ws.member })).status).toBe(409);
    const retried = await call("POST", `/api/toolchain/tasks/${task!.id}/retry`, { token: ws.member });
    expect(retried.status).toBe(200);
    expect(await json(retried)).toMatchObject({ status: "pending", attempts: 0 });
    const history = (await getTask(ws.read, task!.id)).history.map((h) => `${h.event}:${h.to_status}`);
    expect(history).toEqual(["created:pending", "cancelled:cancelled", "manual_retry:pending"]);
  });

  it("does not retry a task whose work is open again as a newer task (409 naming it)", async () => {
    const ws = await toolchainWorkspace();
    const [first] = (await deliverOk(ws.id, "status", fixture("status_deploy_error"))).task_ids;
    expect((await call("POST", `/api/toolchain/tasks/${first}/cancel`, { token: ws.member })).status).toBe(200);
    // The same deployment fails again in a new delivery: a new open task for the same work.
    const [second] = (await deliverOk(ws.id, "status", anotherEvent(fixture("status_deploy_error"), 1))).task_ids;
    expect(second).toBeDefined();
    const res = await call("POST", `/api/toolchain/tasks/${first}/retry`, { token: ws.member });
    expect(res.status).toBe(409);
    expect(await json(res)).toMatchObject({ error: { code: "conflict", details: { open_task_id: second } } });
    expect((await getTask(ws.read, first!)).task.status).toBe("cancelled");
    expect((await getTask(ws.read, first!)).history.map((h) => h.event)).toEqual(["created", "cancelled"]);
  });

  it("answers 404 for unknown tasks and for another workspace's tasks, on every route", async () => {
    const ws = await seed();
    const other = await toolchainWorkspace();
    const [task] = await listTasks(ws.read);
    for (const [method, path, body] of [
      ["GET", `/api/toolchain/tasks/${task!.id}`, undefined],
      ["POST", `/api/toolchain/tasks/${task!.id}/comments`, { body: "hello there" }],
      ["POST", `/api/toolchain/tasks/${task!.id}/outputs`, { content: "x" }],
      ["POST", `/api/toolchain/tasks/${task!.id}/retry`, undefined],
      ["POST", `/api/toolchain/tasks/${task!.id}/cancel`, undefined],
      ["GET", "/api/toolchain/tasks/tct_nope", undefined],
    ] as const) {
      const res = await call(method, path, { token: other.admin, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await getTask(ws.read, task!.id)).comments).toEqual([]);
  });
});
