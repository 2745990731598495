/**
 * Delegation and teams on `wrangler dev` with the scripted model (docs/delegation.md): a parent
 * delegates two tasks whose requests overlap at the model (they run in parallel) and gets both
 * answers; the console shows the tree in Chromium (parent → children, child → parent); a pipeline team
 * of three and a discussion team finish with every member's turn in the log.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Page } from "playwright-core";
import { launchChromium, signIn, type Chromium } from "../support/chromium.ts";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const SHOTS = resolve(import.meta.dirname, "../../test-results/screenshots");
const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);
const rand = Math.random().toString(36).slice(2, 8);
const entry = (id: string) => ({ provider: "openai-compatible", id, base_url: `${modelUrl}/v1` });

let ws: { id: string; token: string };

async function agent(id: string, model: string): Promise<void> {
  const res = await api("POST", "/api/agents", {
    token: ws.token,
    body: { id, gitea_username: id, roles: ["developer"], model: entry(model) },
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function waitRun(sessionId: string, runId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 120; i++) {
    const res = await api("GET", `/api/sessions/${sessionId}/runs/${runId}`, { token: ws.token });
    const run = (await res.json()) as { status: string; result: Record<string, unknown> };
    if (!["queued", "running"].includes(run.status)) return run.result;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("run did not end");
}

const PARENT = `parent-${rand}`;
// `echo@1500`: the echo rule, answered after 1.5 s (test/support/scripted-openai.ts).
const CHILD_A = `echo@1500:child-a-${rand}`;
const CHILD_B = `echo@1500:child-b-${rand}`;

beforeAll(async () => {
  ws = await newWorkspace();
  const put = await api("PUT", "/api/config", { token: ws.token, body: { model: entry(PARENT) } });
  expect(put.status, await put.clone().text()).toBe(200);
  await agent("ca", CHILD_A);
  await agent("cb", CHILD_B);
});

describe("e2e: delegation", () => {
  let parentId = "";
  let childIds: string[] = [];

  it("a parent delegates two tasks in parallel and gets both answers", async () => {
    await models.script(PARENT, [
      {
        tool_calls: [
          {
            name: "delegate",
            arguments: {
              tasks: [
                { agent: "ca", task: "count the dams" },
                { agent: "cb", task: "name the lodge" },
              ],
            },
          },
        ],
      },
      { text: "parent has both answers" },
    ]);
    const created = await api("POST", "/api/sessions", { token: ws.token, body: { title: "delegating parent" } });
    parentId = ((await created.json()) as { id: string }).id;
    const sent = await api("POST", `/api/sessions/${parentId}/messages`, { token: ws.token, body: { content: "split this work" } });
    expect(sent.status, await sent.clone().text()).toBe(202);
    const { run_id } = (await sent.json()) as { run_id: string };
    const result = await waitRun(parentId, run_id);
    expect(result).toMatchObject({ status: "completed", output_text: "parent has both answers" });
    expect(result.delegated_usage).toMatchObject({ total_tokens: expect.any(Number) });

    // Both children's model requests were in flight at the same time.
    const [a] = await models.requests(CHILD_A);
    const [b] = await models.requests(CHILD_B);
    expect(a && b).toBeTruthy();
    expect(a!.received_at).toBeLessThan(b!.answered_at!);
    expect(b!.received_at).toBeLessThan(a!.answered_at!);

    // The parent's second request carries the delegate result with both answers and the children's ids.
    const parentRequests = await models.requests(PARENT);
    const toolMessage = JSON.stringify(parentRequests[1]!.body.messages.filter((m) => m.role === "tool"));
    expect(toolMessage).toContain("echo: count the dams");
    expect(toolMessage).toContain("echo: name the lodge");
    const listed = await api("GET", `/api/sessions?parent_session_id=${parentId}`, { token: ws.token });
    childIds = ((await listed.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);
    expect(childIds).toHaveLength(2);
    for (const id of childIds) expect(toolMessage).toContain(id);
    const child = (await (await api("GET", `/api/sessions/${childIds[0]}`, { token: ws.token })).json()) as {
      metadata: Record<string, unknown>;
    };
    expect(child.metadata).toMatchObject({ parent_session_id: parentId, parent_run_id: run_id });
  });

  describe("the console shows the tree", () => {
    let browser: Chromium;
    let page: Page;

    beforeAll(async () => {
      mkdirSync(SHOTS, { recursive: true });
      browser = await launchChromium();
      page = browser.page;
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
    });

    it("from the parent to its children and back", async () => {
      await signIn(page, baseUrl(), ws.token);
      await page.goto(`${baseUrl()}/chat/${encodeURIComponent(parentId)}`);
      const tree = page.getByRole("navigation", { name: "Delegation" });
      await tree.getByTestId("delegation-children").waitFor();
      const links = tree.getByRole("link");
      await expect.poll(() => links.count()).toBe(2);
      await page.screenshot({ path: join(SHOTS, "delegation-parent.png"), fullPage: true });
      await links.first().click();
      await page.waitForURL((url) => childIds.some((id) => url.pathname.endsWith(encodeURIComponent(id))));
      const back = page.getByRole("navigation", { name: "Delegation" }).getByRole("link", { name: parentId });
      await back.waitFor();
      await page
        .getByRole("list", { name: "Messages" })
        .getByText(/echo: (count the dams|name the lodge)/)
        .waitFor();
      await page.screenshot({ path: join(SHOTS, "delegation-child.png"), fullPage: true });
      await back.click();
      await page.waitForURL((url) => url.pathname.endsWith(encodeURIComponent(parentId)));
    });
  });
});

describe("e2e: teams", () => {
  interface TeamRun {
    session_id: string;
    status: string;
    output_text: string;
    finish_reason: string;
    turns: { member: string; answer: string; round?: number }[];
  }

  async function runTeam(name: string, message: string): Promise<TeamRun> {
    const res = await api("POST", `/api/teams/${name}/runs`, { token: ws.token, body: { message } });
    expect(res.status, await res.clone().text()).toBe(202);
    const started = (await res.json()) as TeamRun;
    for (let i = 0; i < 160; i++) {
      const run = (await (await api("GET", `/api/teams/${name}/runs/${started.session_id}`, { token: ws.token })).json()) as TeamRun;
      if (!["queued", "running"].includes(run.status)) return run;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error("team run did not end");
  }

  it("a pipeline of three and a discussion finish with every member's turn in the log", async () => {
    for (const id of ["p1", "p2", "p3"]) await agent(id, `echo:${id}-${rand}`);
    const chair = `chair-${rand}`;
    await agent("chair", chair);
    await models.script(chair, [{ text: "CONTINUE" }, { text: "DONE\nbeavers build dams" }]);
    const put = await api("PUT", "/api/config", {
      token: ws.token,
      body: {
        model: entry(PARENT),
        teams: [
          { name: "relay", coordinator: "p1", members: ["p1", "p2", "p3"], mode: "pipeline" },
          { name: "panel", coordinator: "chair", members: ["p1", "p2"], mode: "discussion", max_rounds: 3 },
        ],
      },
    });
    expect(put.status, await put.clone().text()).toBe(200);

    const relay = await runTeam("relay", "pass it on");
    expect(relay.status).toBe("completed");
    expect(relay.turns.map((t) => t.member)).toEqual(["p1", "p2", "p3"]);
    // Each step echoes its input, which holds the previous step's output.
    expect(relay.turns[1]!.answer).toContain("echo: pass it on");
    expect(relay.output_text).toContain("Output of the previous step (p2)");
    for (const id of ["p1", "p2", "p3"]) expect((await models.requests(`echo:${id}-${rand}`)).length).toBeGreaterThan(0);

    const panel = await runTeam("panel", "what do beavers build?");
    expect(panel).toMatchObject({ status: "completed", output_text: "beavers build dams", finish_reason: "done" });
    expect(panel.turns.map((t) => `${t.member}@${t.round}`)).toEqual(["p1@1", "p2@1", "chair@1", "p1@2", "p2@2", "chair@2"]);
    const log = (await (await api("GET", `/api/sessions/${panel.session_id}/events`, { token: ws.token })).json()) as {
      events: { type: string; kind?: string }[];
    };
    expect(log.events.filter((e) => e.type === "custom" && e.kind === "team:turn")).toHaveLength(6);
  });
});
