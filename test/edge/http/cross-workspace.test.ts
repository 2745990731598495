/**
 * Issue 25 item 6: another workspace's ids answer 404 on every route, lists with a foreign filter
 * included. The sweep walks the app's own OpenAPI document: every GET operation that takes an id in
 * its path or an id filter in its query is called from workspace B (an admin token, so scopes never
 * hide the answer) with workspace A's real ids, and must answer 404 — not 200 (a leak or an empty
 * list that confirms nothing but hides the mistake) and not 403. A GET route with an id parameter
 * the sweep has no id for fails the test, so a new route joins the sweep when it is added.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { ScriptedModel, scriptedWorkspace, text } from "../../support/sessions.ts";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
}
interface OpenApi {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
}

/** Path and query parameters that name an object of a workspace (`store`, `path`, `version` qualify an id, they are not one). */
const QUALIFIERS = new Set(["store", "path", "version"]);
/**
 * Query parameters named like ids that are not a workspace's objects: page cursors (`before_id`: a
 * foreign one only positions a page of the caller's own items), client-chosen labels of a live
 * connection, a session to leave out of a search, and the bootstrap admin's workspace filter.
 */
const NOT_OBJECT_IDS = new Set(["before_id", "client_id", "device_id", "exclude_session_id", "workspace_id"]);
const isIdParameter = (p: Parameter) =>
  (p.in === "path" && !QUALIFIERS.has(p.name) && p.name !== "model") ||
  (p.in === "query" && !NOT_OBJECT_IDS.has(p.name) && (p.name.endsWith("_id") || p.name === "session"));

/**
 * GET routes whose id has no workspace-A object in this sweep yet, each with why; the test fails if
 * one of them starts working or a new uncovered route appears. Empty is the goal.
 */
const NOT_SWEPT: Record<string, string> = {
  "GET /api/drafts/{id}": "a learning draft needs a finished run with a proposal; covered by test/domains/learning",
  "GET /api/drafts/{id}/evaluation": "as above",
  "GET /api/drafts/{id}/evaluation/stream": "as above",
  "GET /api/toolchain/tasks/{id}": "a toolchain task needs a Gitea webhook delivery; covered by test/domains/toolchain",
  "GET /api/teams/{name}/runs/{id}": "a team run needs a team in the config and its members; covered by test/domains/team",
};

describe("cross-workspace ids (issue 25 item 6)", () => {
  it("every GET route with an id in its path or query answers 404 to another workspace", async () => {
    const a = await scriptedWorkspace(new ScriptedModel([text("done")]));
    const b = await newWorkspace();

    // Workspace A's objects.
    const session = await createSession(env, { workspaceId: a.id, title: "A's session" });
    const { run_id } = await submitRun(env, session.id, { workspace_id: a.id, content: "hello" });
    await waitForRun(env, session.id, run_id, 10_000);
    const schedule = await call("POST", "/api/schedules", {
      token: a.member,
      body: { session_id: session.id, message: "later", at: "2030-01-01T00:00:00Z" },
    });
    expect(schedule.status).toBe(201);
    const scheduleId = (await json<{ id: string }>(schedule)).id;
    const skillName = `a-only-${a.id.slice(3, 9)}`;
    const skill = await call("PUT", `/api/skills/${skillName}`, {
      token: a.member,
      body: { files: [{ path: "SKILL.md", content: skillMd(skillName, "Only in A.") }] },
    });
    expect(skill.status).toBeLessThan(300);
    const token = await call("POST", "/api/tokens", { token: a.admin, body: { name: "a-token", scopes: ["read"] } });
    expect(token.status).toBe(201);
    const tokenId = (await json<{ id: string }>(token)).id;
    const agents = [`dev-${a.id.slice(3, 9)}`, `rev-${a.id.slice(3, 9)}`];
    for (const id of agents)
      expect((await call("POST", "/api/agents", { token: a.admin, body: { id, gitea_username: id, roles: ["developer"] } })).status).toBe(
        201,
      );
    const mail = await call("POST", "/api/mail", {
      token: a.member,
      body: { from_agent: agents[0], to_agent: agents[1], performative: "inform", subject: "A only", body: "secret plans" },
    });
    expect(mail.status).toBe(201);
    const mailId = (await json<{ id: string }>(mail)).id;

    /** A's id for a parameter of a route, or null when the sweep has none. */
    const idFor = (route: string, name: string): string | null => {
      if (name === "run_id") return run_id;
      if (name === "session_id" || name === "session" || name === "parent_session_id") return session.id;
      if (name === "name" && route.startsWith("/api/skills/")) return skillName;
      if (name === "id" && route.startsWith("/api/sessions/")) return session.id;
      if (name === "id" && route.startsWith("/api/ui/chat/")) return session.id;
      if (name === "id" && route.startsWith("/api/schedules/")) return scheduleId;
      if (name === "id" && route.startsWith("/api/tokens/")) return tokenId;
      if (name === "id" && route.startsWith("/api/mail/")) return mailId;
      if ((name === "id" && route.startsWith("/api/agents/")) || name === "agent_id") return agents[0]!;
      return null;
    };
    const qualifier = (name: string) => (name === "version" ? "v0001" : name === "store" ? "notes" : "SKILL.md");

    const doc = await json<OpenApi>(await call("GET", "/api/openapi.json", { token: null }));
    const problems: string[] = [];
    const uncovered: string[] = [];
    let swept = 0;
    for (const [route, operations] of Object.entries(doc.paths)) {
      const get = operations.get;
      if (!get) continue;
      const params = (get.parameters ?? []).filter(isIdParameter);
      if (params.length === 0) continue;
      const key = `GET ${route}`;
      const pathParams = params.filter((p) => p.in === "path");
      // Path ids: all of A's; then each query filter on its own (a list with a foreign filter).
      const cases: { url: string; what: string }[] = [];
      let url = route;
      let missing = false;
      for (const p of (get.parameters ?? []).filter((p) => p.in === "path")) {
        const value = QUALIFIERS.has(p.name) ? qualifier(p.name) : idFor(route, p.name);
        if (value === null) missing = true;
        else url = url.replace(`{${p.name}}`, encodeURIComponent(value));
      }
      if (missing) {
        uncovered.push(key);
        continue;
      }
      // Qualifiers in the query (a file's `path`) are sent along, so the id is what decides.
      const extra = (get.parameters ?? []).filter((p) => p.in === "query" && QUALIFIERS.has(p.name));
      if (extra.length > 0) url += `?${extra.map((p) => `${p.name}=${encodeURIComponent(qualifier(p.name))}`).join("&")}`;
      const join = url.includes("?") ? "&" : "?";
      if (pathParams.length > 0) cases.push({ url, what: "path" });
      for (const q of params.filter((p) => p.in === "query")) {
        const value = idFor(route, q.name);
        if (value === null) {
          uncovered.push(`${key}?${q.name}`);
          continue;
        }
        cases.push({ url: `${url}${join}${q.name}=${encodeURIComponent(value)}`, what: `query ${q.name}` });
      }
      for (const c of cases) {
        swept++;
        const res = await call("GET", c.url, { token: b.admin });
        if (res.status !== 404) problems.push(`${key} (${c.what}): ${res.status} ${(await res.text()).slice(0, 120)}`);
        else await res.body?.cancel();
      }
    }
    expect(swept).toBeGreaterThan(20);
    expect(problems).toEqual([]);
    expect(uncovered.sort()).toEqual(Object.keys(NOT_SWEPT).sort());
  });
});
