/**
 * Issue 25 item 6: another workspace's ids answer 404 on every route, lists with a foreign filter
 * included. Both sweeps walk the app's own OpenAPI document, from workspace B (an admin token, so
 * scopes never hide the answer) with workspace A's real ids:
 * - every GET operation that takes an id in its path or an id filter in its query must answer 404 —
 *   not 200 (a leak, or an empty list that confirms nothing but hides the mistake) and not 403;
 * - every write operation (POST/PUT/PATCH/DELETE) is called with a valid body naming A's objects and
 *   must answer 404, and A must read the same afterwards (every A read of the GET sweep is compared);
 *   a `PUT`/`POST` that creates by a name (skill, secret, agent, plugin source) makes B's own object.
 * A route the sweeps have no id for, or a write route neither swept nor listed with a reason, fails
 * the test, so a new route joins the sweep when it is added. Fixtures are made once; calls that do not
 * depend on each other run in parallel, to keep the file cheap in CI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import {
  ScriptedModel,
  countingTool,
  doEvents,
  registerModel,
  registerToolset,
  replicated,
  text,
  toolCalls,
  until,
} from "../../support/sessions.ts";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { createApp } from "../../../src/edge/http/app.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { tarGz } from "../../fixtures/skills/archives.ts";
import { pluginPackage, uploadPackage } from "../../support/plugins.ts";
import { fixture } from "../../support/toolchain-fixtures.ts";
import { deliverOk, toolchainWorkspace } from "../../support/toolchain-setup.ts";
import { setOutboundFetch } from "../../support/test-services.ts";

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

/** GET routes whose id has no workspace-A object in this sweep, each with why. Empty is the goal. */
const NOT_SWEPT: Record<string, string> = {};

/**
 * Write routes not swept, each with why. Every other write route of the document must be in `writes`
 * below: the test fails on a route in neither.
 */
const WRITES_NOT_SWEPT: Record<string, string> = {
  "POST /api/workspaces": "no id: creates a workspace (bootstrap admin only; a workspace admin gets 403, test/edge/http/auth.test.ts)",
  "POST /api/tokens":
    "no object id: `workspace_id` is the bootstrap admin's target; a workspace admin gets 403 before any lookup (test/edge/http/auth.test.ts)",
  "PUT /api/config": "no id: the caller's own configuration",
  "POST /api/skills/_gc": "no id: collects the caller's own unreferenced blobs",
  "PUT /api/plugins/packages": "no id: the plugin's id is in the uploaded manifest, in the caller's own namespace",
  "POST /api/candidates/run": "no id: runs the caller's own candidate job",
  "POST /api/sessions": "no id: creates a session in the caller's workspace",
  "POST /api/toolchain/dispatch": "no id: dispatches the caller's own queued tasks",
  "POST /api/teams/{name}/runs": "no id: the team's name is looked up in the caller's own config",
  "POST /api/oauth/requests": "no object id: `query` is an OAuth client's authorization request",
  "POST /api/oauth/authorize":
    "no object id: `query` is an OAuth request; `workspace_id` is the bootstrap admin's target (403 for a workspace admin, test/edge/oauth/oauth-server.test.ts)",
  "POST /api/oauth/deny": "no object id: `query` is an OAuth client's authorization request",
  "DELETE /api/oauth/grants/{id}":
    "a grant needs the whole OAuth flow (registration, consent, PKCE); another workspace's grant answers 404 in test/edge/oauth/oauth-server.test.ts",
  "POST /api/mcp/oauth/callback":
    "`state` is minted by an OAuth MCP connection; another workspace's state is not consumed in test/domains/mcp (mcp client oauth)",
  "POST /mcp":
    "JSON-RPC, not a REST route: its tools resolve ids in the grant's workspace (404 across, test/edge/oauth/oauth-server.test.ts)",
  "DELETE /mcp": "no id: served outside the document, answers 405 (Beaver's MCP server keeps no transport session to end)",
  "POST /webhooks/gitea/{workspace_id}":
    "the workspace id is public by design: a delivery counts only when signed with that workspace's secret (test/domains/toolchain/intake.test.ts)",
};

interface Fixtures {
  a: TestWorkspace;
  b: TestWorkspace;
  session: string;
  run: string;
  events: string[];
  /** A second session of A whose run waits on a tool approval (`tool_policy` require_approval). */
  approvalSession: string;
  approval: string;
  schedule: string;
  skill: string;
  token: string;
  mail: string;
  draft: string;
  task: string;
  team: string;
  teamSession: string;
  memoryEntry: string;
  plugin: string;
  pluginSkill: string;
  source: string;
}

const ok = async (res: Response, what: string): Promise<Record<string, unknown>> => {
  const body = await res.text();
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${body}`);
  return body ? (JSON.parse(body) as Record<string, unknown>) : {};
};

/** Workspace A with one object of every kind a route names; B has same-named agents and team so names never decide, only ids. */
async function fixtures(): Promise<Fixtures> {
  // "ship it" asks for the `deploy` tool, which needs approval in A; everything else is answered at once.
  const shipIt = (prompt: unknown) => JSON.stringify(prompt).includes("ship it");
  const modelId = registerModel(
    new ScriptedModel((_, options) => (shipIt(options.prompt) ? toolCalls({ id: "d1", name: "deploy", args: { n: 1 } }) : text("done"))),
  );
  const toolset = registerToolset(`cross-${crypto.randomUUID()}`, [countingTool("deploy").spec]);
  const model = { provider: "openai-compatible", id: modelId, base_url: "http://scripted.test/v1" };
  // A: a toolchain workspace (webhook secret, Gitea token secret, the cast of agents) on the scripted model.
  const [a, b] = await Promise.all([toolchainWorkspace({}, { model }), newWorkspace()]);
  const team = "crew";
  const tool_policy = [{ match: "deploy", action: "require_approval" }];
  const teams = [{ name: team, coordinator: "jony", members: ["jony", "nice"], mode: "pipeline" }];
  const mcp = { servers: [{ name: "a-mcp", url: "https://mcp.a.test/mcp" }] };
  const configA = await ok(await call("GET", "/api/config", { token: a.admin }), "config A");
  await ok(await call("PUT", "/api/config", { token: a.admin, body: { ...configA, teams, tool_policy } }), "teams A");
  for (const id of ["jony", "nice"])
    await ok(await call("POST", "/api/agents", { token: b.admin, body: { id, gitea_username: id, roles: ["developer"] } }), "agent B");
  await ok(await call("PUT", "/api/config", { token: b.admin, body: { teams } }), "teams B");

  const skill = `a-only-${a.id.slice(3, 9)}`;
  const session = await createSession(env, { workspaceId: a.id, title: "A's session" });
  const approvalSession = await createSession(env, { workspaceId: a.id, title: "A's paused run" });
  const [run, schedule, , token, mail, draft, delivery, teamRun, memory, plugin, source, approval] = await Promise.all([
    submitRun(env, session.id, { workspace_id: a.id, content: "hello" }).then(async ({ run_id }) => {
      await waitForRun(env, session.id, run_id, 10_000);
      return run_id;
    }),
    call("POST", "/api/schedules", {
      token: a.member,
      body: { session_id: session.id, message: "later", at: "2030-01-01T00:00:00Z" },
    }).then((r) => ok(r, "schedule")),
    call("PUT", `/api/skills/${skill}`, {
      token: a.member,
      body: { files: [{ path: "SKILL.md", content: skillMd(skill, "Only in A.") }] },
    }).then((r) => ok(r, "skill")),
    call("POST", "/api/tokens", { token: a.admin, body: { name: "a-token", scopes: ["read"] } }).then((r) => ok(r, "token")),
    call("POST", "/api/mail", {
      token: a.member,
      body: { from_agent: "jony", to_agent: "nice", performative: "request", subject: "A only", body: "secret plans" },
    }).then((r) => ok(r, "mail")),
    // A learning draft: an upload marked as a draft (its skill has no version yet).
    call("PUT", `/api/skills/a-draft/upload?draft=true`, {
      token: a.member,
      rawBody: await tarGz([{ name: "a-draft/SKILL.md", data: skillMd("a-draft", "Drafted in A.") }]),
      headers: { "Content-Type": "application/gzip" },
    }).then((r) => ok(r, "draft")),
    deliverOk(a.id, "issue_assign", fixture("issue_assign")),
    call("POST", `/api/teams/${team}/runs`, { token: a.member, body: { message: "plan the work" } }).then(async (r) => {
      const started = (await ok(r, "team run")) as { session_id: string; run_id: string };
      await SessionClient.of(env, started.session_id).waitForRun(started.run_id, 15_000, a.id);
      return started;
    }),
    call("POST", "/api/memory/notes/entries", { token: a.member, body: { text: "Prefers tea." } }).then((r) => ok(r, "memory")),
    uploadPackage(
      a.admin,
      await pluginPackage("a-kit", "1.0.0", { "kit-skill": { "SKILL.md": skillMd("kit-skill", "From A's kit.") } }),
    ).then(async (up) => {
      if (up.status >= 300) throw new Error(`plugin: ${up.status} ${JSON.stringify(up.body)}`);
      await ok(await call("POST", "/api/plugins/a-kit/enable", { token: a.admin }), "enable");
      return "a-kit";
    }),
    call("PUT", "/api/plugins/sources/a-src", { token: a.admin, body: { owner: "gordon", repo: "hello-world" } }).then((r) =>
      ok(r, "source"),
    ),
    submitRun(env, approvalSession.id, { workspace_id: a.id, content: "ship it", toolset }).then(async () => {
      let id: string | undefined;
      await until(
        async () => {
          const asked = (await doEvents(approvalSession.id, a.id)).find((e) => e.type === "tool_approval_requested");
          id = asked && "approval_id" in asked ? asked.approval_id : undefined;
          return id !== undefined;
        },
        10_000,
        "tool_approval_requested",
      );
      return id!;
    }),
  ]);
  // Every session's log in D1 before anything is compared (docs/sessions.md: D1 gets a run's log after its answer).
  const children = (await ok(await call("GET", `/api/sessions?parent_session_id=${teamRun.session_id}`, { token: a.read }), "children"))
    .sessions as { id: string }[];
  expect(children.length).toBeGreaterThan(0);
  await Promise.all([session.id, teamRun.session_id, ...children.map((c) => c.id)].map((id) => replicated(id)));
  await ok(await call("PUT", "/api/config", { token: a.admin, body: { ...configA, teams, tool_policy, mcp } }), "mcp A");
  // Reading a receipt stores it the first time (src/domains/learning/receipts/read.ts): store it now, so A's reads below are stable.
  await ok(await call("GET", `/api/sessions/${session.id}/runs/${run}/receipt`, { token: a.read }), "receipt");
  const events = (await ok(await call("GET", `/api/sessions/${session.id}/events`, { token: a.read }), "events")).events as {
    id: string;
  }[];
  return {
    a,
    b,
    session: session.id,
    run,
    events: events.map((e) => e.id),
    approvalSession: approvalSession.id,
    approval,
    schedule: schedule.id as string,
    skill,
    token: token.id as string,
    mail: mail.id as string,
    draft: draft.draft_id as string,
    task: delivery.task_ids[0]!,
    team,
    teamSession: teamRun.session_id,
    memoryEntry: (memory.entry as { id: string }).id,
    plugin,
    pluginSkill: "kit-skill",
    source: source.id as string,
  };
}

/** A's id for a parameter of a route, or null when the sweep has none. */
function idFor(f: Fixtures, route: string, name: string): string | null {
  if (name === "run_id") return route.startsWith("/api/sessions/") || route.includes("{run_id}") ? f.run : null;
  if (name === "session_id" || name === "session" || name === "parent_session_id") return f.session;
  if (name === "agent_id") return "ops"; // an agent of A's cast that B does not have
  if (name === "approval_id") return f.approval;
  if (name === "id" && route.includes("{approval_id}")) return f.approvalSession;
  if (name === "skill" && route.startsWith("/api/plugins/")) return f.pluginSkill;
  if (name === "name" && route.startsWith("/api/skills/")) return f.skill;
  if (name === "name" && route.startsWith("/api/teams/")) return f.team;
  if (name === "name" && route.startsWith("/api/secrets/")) return "GITEA_TOKEN";
  if (name === "name" && route.startsWith("/api/mcp/servers/")) return "a-mcp";
  if (name !== "id") return null;
  const byPrefix: [string, string][] = [
    ["/api/sessions/", f.session],
    ["/api/ui/chat/", f.session],
    ["/api/schedules/", f.schedule],
    ["/api/tokens/", f.token],
    ["/api/mail/", f.mail],
    ["/api/agents/", "ops"],
    ["/api/drafts/", f.draft],
    ["/api/toolchain/tasks/", f.task],
    ["/api/teams/", f.teamSession],
    ["/api/memory/", f.memoryEntry],
    ["/api/plugins/sources/", f.source],
    ["/api/plugins/", f.plugin],
  ];
  return byPrefix.find(([prefix]) => route.startsWith(prefix))?.[1] ?? null;
}
const qualifier = (name: string) => (name === "version" ? "v0001" : name === "store" ? "notes" : "SKILL.md");

/** `route` with its path parameters filled from A's objects, or null when one has no id. */
function fill(f: Fixtures, route: string, params: Parameter[]): string | null {
  let url = route;
  for (const p of params.filter((p) => p.in === "path")) {
    const value = QUALIFIERS.has(p.name) ? qualifier(p.name) : idFor(f, route, p.name);
    if (value === null) return null;
    url = url.replace(`{${p.name}}`, encodeURIComponent(value));
  }
  return url;
}

/** The GET cases: a route with A's path ids, and each id filter of its query on its own. */
function getCases(f: Fixtures, doc: OpenApi): { cases: { key: string; url: string; what: string }[]; uncovered: string[] } {
  const cases: { key: string; url: string; what: string }[] = [];
  const uncovered: string[] = [];
  for (const [route, operations] of Object.entries(doc.paths)) {
    const get = operations.get;
    if (!get) continue;
    const all = get.parameters ?? [];
    const params = all.filter(isIdParameter);
    if (params.length === 0) continue;
    const key = `GET ${route}`;
    let url = fill(f, route, all);
    if (url === null) {
      uncovered.push(key);
      continue;
    }
    // Qualifiers in the query (a file's `path`) are sent along, so the id is what decides.
    const extra = all.filter((p) => p.in === "query" && QUALIFIERS.has(p.name));
    if (extra.length > 0) url += `?${extra.map((p) => `${p.name}=${encodeURIComponent(qualifier(p.name))}`).join("&")}`;
    const join = url.includes("?") ? "&" : "?";
    if (params.some((p) => p.in === "path")) cases.push({ key, url, what: "path" });
    for (const q of params.filter((p) => p.in === "query")) {
      const value = idFor(f, route, q.name);
      if (value === null) uncovered.push(`${key}?${q.name}`);
      else cases.push({ key, url: `${url}${join}${q.name}=${encodeURIComponent(value)}`, what: `query ${q.name}` });
    }
  }
  return { cases, uncovered };
}

/** A write call: query string, JSON body or raw body; all name A's objects. */
interface Write {
  query?: string;
  body?: unknown;
  raw?: { bytes: Uint8Array; type: string };
  headers?: Record<string, string>;
}

/** The write calls, by route: each gets a valid body carrying A's ids where the body takes one. */
async function writes(f: Fixtures): Promise<Record<string, Write>> {
  const archive = await tarGz([{ name: `${f.skill}/SKILL.md`, data: skillMd(f.skill, "B's upload.") }]);
  const chat = { model: "beaver", messages: [{ role: "user", content: "hi" }] };
  return {
    "DELETE /api/tokens/{id}": {},
    // A secret's name is the caller's own: deleting A's name from B finds nothing.
    "DELETE /api/secrets/{name}": {},
    "POST /api/skills/{name}/rollback": { body: { version: "v0001" } },
    "POST /api/skills/{name}/disable": {},
    "POST /api/skills/{name}/enable": {},
    "DELETE /api/plugins/sources/{id}": {},
    "POST /api/plugins/sources/{id}/fetch": {},
    "DELETE /api/plugins/packages/{id}": {},
    "POST /api/plugins/sync": { body: { plugin_id: f.plugin } },
    "POST /api/plugins/{id}/enable": {},
    "POST /api/plugins/{id}/pause": {},
    "POST /api/plugins/{id}/resume": {},
    "POST /api/plugins/{id}/disable": { body: { disable_linked_skills: true } },
    "POST /api/plugins/{id}/skills/{skill}/adopt": {},
    "POST /api/drafts/{id}/approve": { body: { skip_evaluation: true, reason: "from B" } },
    "POST /api/drafts/{id}/reject": { body: { reason: "from B" } },
    "POST /api/drafts/{id}/regenerate": {},
    "POST /api/drafts/{id}/evaluate": { body: {} },
    "POST /api/drafts/{id}/evaluation/cancel": {},
    "POST /api/sessions/{id}/stream-ticket": {},
    "POST /api/sessions/{id}/messages": { body: { content: "from B" } },
    "POST /api/sessions/{id}/approvals/{approval_id}": { body: { decision: "approve" } },
    "POST /api/sessions/{id}/runs/{run_id}/feedback": { body: { rating: "down", comment: "from B" } },
    "PATCH /api/sessions/{id}": { body: { title: "renamed by B" } },
    "DELETE /api/sessions/{id}": {},
    "POST /api/sessions/{id}/rewind": { body: { target_event_id: f.events[0] } },
    "POST /api/sessions/{id}/branch": { body: { leaf_event_id: f.events[0] } },
    "POST /api/sessions/{id}/compact": { body: {} },
    "POST /api/sessions/{id}/cancel": { body: { run_id: f.run } },
    "POST /api/sessions/{id}/close": {},
    "POST /api/sessions/{id}/fork": { body: { event_id: f.events.at(-1) } },
    "POST /api/sessions/{id}/stop": { body: {} },
    "POST /api/sessions/{id}/runs/{run_id}/retry": { body: {} },
    "POST /api/chat": { body: { message: "from B", session_id: f.session } },
    "PATCH /api/agents/{id}": { body: { enabled: false } },
    "POST /api/toolchain/tasks/{id}/comments": { body: { body: "from B" } },
    "POST /api/toolchain/tasks/{id}/outputs": { body: { content: "from B" } },
    "POST /api/toolchain/tasks/{id}/retry": {},
    "POST /api/toolchain/tasks/{id}/cancel": {},
    // B has agents jony and nice too, so only the foreign `in_reply_to` can refuse this.
    "POST /api/mail": {
      body: { from_agent: "nice", to_agent: "jony", performative: "inform", subject: "re", body: "from B", in_reply_to: f.mail },
    },
    "POST /api/mail/{id}/reply": { body: { body: "from B" } },
    "POST /api/mail/{id}/cancel": {},
    "PUT /api/memory/{store}": { query: "?agent_id=ops", body: { entries: [] } },
    "POST /api/memory/{store}/entries": { query: "?agent_id=ops", body: { text: "from B" } },
    "DELETE /api/memory/{store}/entries/{id}": {},
    "POST /api/schedules": { body: { session_id: f.session, message: "from B", at: "2030-01-01T00:00:00Z" } },
    "DELETE /api/schedules/{id}": {},
    "POST /api/mcp/servers/{name}/connect": {},
    "DELETE /api/mcp/servers/{name}/connection": {},
    "POST /v1/chat/completions": { body: chat, headers: { "x-beaver-session-id": f.session } },
    "POST /v1/responses": { body: { model: "beaver", input: "hi" }, headers: { "x-beaver-session-id": f.session } },
    "POST /api/ui/chat": {
      body: { id: f.session, trigger: "submit-message", messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] }] },
    },
    // Names in the caller's own namespace: B's call makes B's own object; A must stay as it was.
    "PUT /api/secrets/{name}": { body: { value: "B's value" } },
    "PUT /api/skills/{name}": { body: { files: [{ path: "SKILL.md", content: skillMd(f.skill, "B's skill.") }] } },
    "PUT /api/skills/{name}/upload": { raw: { bytes: archive, type: "application/gzip" } },
    "PUT /api/plugins/sources/{id}": { body: { owner: "gordon", repo: "hello-world" } },
    "POST /api/agents": { body: { id: "ops", gitea_username: "ops", roles: ["infra"] } },
  };
}

/** Routes whose parameter is a name in the caller's own namespace and that create: B gets its own object, never A's. */
const OWN_NAMESPACE: Record<string, number> = {
  "PUT /api/secrets/{name}": 200,
  "PUT /api/skills/{name}": 200,
  "PUT /api/skills/{name}/upload": 200,
  "PUT /api/plugins/sources/{id}": 200,
  "POST /api/agents": 201,
};

/** The clock in a run's context (its runtime section) is the one thing a read of A may change on its own. */
const timeless = (text: string) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?( \(\w+\))?/g, "<time>");

/** A's view through every A read of the GET sweep (streams excluded), to compare before and after B's writes. */
async function snapshot(f: Fixtures, urls: string[]): Promise<Record<string, string>> {
  const entries = await Promise.all(
    urls.map(async (url) => {
      const res = await call("GET", url, { token: f.a.admin });
      if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
        await res.body?.cancel();
        return [url, `${res.status} stream`] as const;
      }
      return [url, `${res.status} ${timeless(new TextDecoder().decode(await res.arrayBuffer()))}`] as const;
    }),
  );
  return Object.fromEntries(entries);
}

describe("cross-workspace ids (issue 25 item 6)", () => {
  let f: Fixtures;
  let doc: OpenApi;
  beforeAll(async () => {
    // Nothing here needs the network: A's MCP server (reached when A reads a run's context) answers 404 at once, without DNS.
    setOutboundFetch(async () => new Response("not found", { status: 404 }));
    [f, doc] = await Promise.all([fixtures(), call("GET", "/api/openapi.json", { token: null }).then((r) => json<OpenApi>(r))]);
  }, 60_000);
  afterAll(() => setOutboundFetch(null));

  it("every GET route with an id in its path or query answers 404 to another workspace", async () => {
    const { cases, uncovered } = getCases(f, doc);
    const problems = await Promise.all(
      cases.map(async (c) => {
        const res = await call("GET", c.url, { token: f.b.admin });
        const text = await res.text();
        return res.status === 404 && text.includes('"code":"not_found"')
          ? null
          : `${c.key} (${c.what}): ${res.status} ${text.slice(0, 120)}`;
      }),
    );
    expect(cases.length).toBeGreaterThan(30);
    expect(problems.filter(Boolean)).toEqual([]);
    expect(uncovered.sort()).toEqual(Object.keys(NOT_SWEPT).sort());
  });

  it("every write route with an id answers 404 to another workspace and changes nothing in it", async () => {
    const calls = await writes(f);
    const routes = Object.entries(doc.paths).flatMap(([route, operations]) =>
      Object.keys(operations)
        .filter((m) => ["post", "put", "patch", "delete"].includes(m))
        .map((m) => ({ key: `${m.toUpperCase()} ${route}`, route, params: operations[m]!.parameters ?? [] })),
    );
    // Every write route is swept or listed with its reason; nothing is both, nothing is stale. Routes the
    // app serves outside the document (plain Hono handlers) count too.
    const served = createApp()
      .routes.filter((r) => ["POST", "PUT", "PATCH", "DELETE"].includes(r.method))
      .map((r) => `${r.method} ${r.path.replace(/\/$/, "").replace(/:([A-Za-z_]+)/g, "{$1}")}`);
    const keys = [...new Set([...routes.map((r) => r.key), ...served])].sort();
    expect([...Object.keys(calls), ...Object.keys(WRITES_NOT_SWEPT)].sort()).toEqual(keys);

    const readUrls = [...getCases(f, doc).cases.map((c) => c.url), `/api/sessions/${f.approvalSession}/events`];
    const before = await snapshot(f, readUrls);
    const problems = await Promise.all(
      routes
        .filter((r) => calls[r.key])
        .map(async ({ key, route, params }) => {
          const w = calls[key]!;
          const url = fill(f, route, params);
          if (url === null) return `${key}: no id for its path`;
          const res = await call(key.split(" ")[0]!, `${url}${w.query ?? ""}`, {
            token: f.b.admin,
            ...(w.raw ? { rawBody: w.raw.bytes, headers: { "Content-Type": w.raw.type } } : {}),
            ...(w.body !== undefined ? { body: w.body } : {}),
            ...(w.headers ? { headers: w.headers } : {}),
          });
          const want = OWN_NAMESPACE[key] ?? 404;
          const text = await res.text();
          // A 404 is the error vocabulary's not_found (not an unknown route); a name in B's namespace made B's own object.
          const right = want === 404 ? text.includes('"code":"not_found"') : want === 201 || text.includes('"created":true');
          return res.status === want && right ? null : `${key}: ${res.status} (want ${want}) ${text.slice(0, 160)}`;
        }),
    );
    expect(problems.filter(Boolean)).toEqual([]);
    expect(await snapshot(f, readUrls)).toEqual(before);
  });
});
