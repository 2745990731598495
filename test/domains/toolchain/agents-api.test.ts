import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";

type Err = { error: { code: string; message: string; details?: { path: string; message: string }[] } };
const jony = { id: "jony", gitea_username: "jony", roles: ["developer"] };

describe("/api/agents", () => {
  it("creates, lists, reads and changes agents", async () => {
    const ws = await newWorkspace();
    const created = await call("POST", "/api/agents", {
      token: ws.admin,
      body: {
        ...jony,
        model: { provider: "openai-compatible", id: "m1", base_url: "https://llm.example.com/v1" },
        gitea_token_secret: "JONY_TOKEN",
      },
    });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({
      id: "jony",
      gitea_username: "jony",
      roles: ["developer"],
      enabled: true,
      gitea_token_secret: "JONY_TOKEN",
      model: { id: "m1" },
    });
    await call("POST", "/api/agents", {
      token: ws.admin,
      body: { id: "boss", gitea_username: "Boss", roles: ["supervisor", "reviewer"], enabled: false },
    });
    const list = await json<{ agents: { id: string; enabled: boolean }[] }>(await call("GET", "/api/agents", { token: ws.read }));
    expect(list.agents.map((a) => [a.id, a.enabled])).toEqual([
      ["boss", false],
      ["jony", true],
    ]);
    const patched = await call("PATCH", "/api/agents/boss", {
      token: ws.admin,
      body: { enabled: true, roles: ["supervisor"], model: null },
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ enabled: true, roles: ["supervisor"], model: null, gitea_username: "Boss" });
    expect(await json(await call("GET", "/api/agents/boss", { token: ws.read }))).toMatchObject({ enabled: true });
  });

  it("refuses a second agent with the same id or Gitea user (any case) with 409", async () => {
    const ws = await newWorkspace();
    expect((await call("POST", "/api/agents", { token: ws.admin, body: jony })).status).toBe(201);
    const sameId = await call("POST", "/api/agents", { token: ws.admin, body: { ...jony, gitea_username: "other" } });
    expect(sameId.status).toBe(409);
    const sameUser = await call("POST", "/api/agents", {
      token: ws.admin,
      body: { id: "j2", gitea_username: "JONY", roles: ["developer"] },
    });
    expect(sameUser.status).toBe(409);
    await call("POST", "/api/agents", { token: ws.admin, body: { id: "nice", gitea_username: "a_nice_user", roles: ["reviewer"] } });
    expect((await call("PATCH", "/api/agents/nice", { token: ws.admin, body: { gitea_username: "Jony" } })).status).toBe(409);
    // Races: concurrent creates of one id make exactly one agent.
    const burst = await Promise.all(
      Array.from({ length: 4 }, () =>
        call("POST", "/api/agents", { token: ws.admin, body: { id: "race", gitea_username: "race", roles: ["infra"] } }),
      ),
    );
    expect(burst.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
  });

  it("validates bodies with field paths, and scopes", async () => {
    const ws = await newWorkspace();
    const unknown = await call("POST", "/api/agents", { token: ws.admin, body: { ...jony, colour: "red" } });
    expect(unknown.status).toBe(400);
    expect((await json<Err>(unknown)).error.details?.[0]?.path).toBe("colour");
    const role = await call("POST", "/api/agents", { token: ws.admin, body: { ...jony, roles: ["overlord"] } });
    expect((await json<Err>(role)).error.details?.[0]?.path).toBe("roles.0");
    const name = await call("POST", "/api/agents", { token: ws.admin, body: { ...jony, gitea_username: "-bad name" } });
    expect((await json<Err>(name)).error.details?.[0]?.path).toBe("gitea_username");
    const model = await call("POST", "/api/agents", { token: ws.admin, body: { ...jony, model: { provider: "nope", id: "x" } } });
    expect((await json<Err>(model)).error.details?.[0]?.path).toBe("model.provider");
    expect(
      (await call("POST", "/api/agents", { token: ws.admin, rawBody: "{", headers: { "Content-Type": "application/json" } })).status,
    ).toBe(400);
    expect((await call("POST", "/api/agents", { token: ws.member, body: jony })).status).toBe(403);
    expect((await call("POST", "/api/agents", { token: null, body: jony })).status).toBe(401);
    expect((await call("PATCH", "/api/agents/ghost", { token: ws.admin, body: { enabled: false } })).status).toBe(404);
  });

  it("keeps agents per workspace: another workspace's agent is 404", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    await call("POST", "/api/agents", { token: a.admin, body: jony });
    expect((await call("GET", "/api/agents/jony", { token: b.admin })).status).toBe(404);
    expect((await call("PATCH", "/api/agents/jony", { token: b.admin, body: { enabled: false } })).status).toBe(404);
    // The same id and user may exist in another workspace.
    expect((await call("POST", "/api/agents", { token: b.admin, body: jony })).status).toBe(201);
  });
});
