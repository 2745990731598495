/**
 * The egress policy where URLs are saved (README "Egress policy"): `PUT /api/config` and
 * `POST/PATCH /api/agents` answer 422 `egress_refused` naming the field for a loopback, private,
 * metadata address or Beaver's own host (the request's host, `beaver.test` here), and accept them
 * when the operator switch `BEAVER_ALLOW_PRIVATE_EGRESS=true` is on. A run whose stored model URL
 * is refused (saved while the switch was on) fails with the refusal, without sending a request.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";
import { testServices } from "../../support/test-services.ts";

type Err = { error: { code: string; message: string; details?: { path: string; message: string }[] } };

const model = (base_url: string) => ({ provider: "openai-compatible", id: "m1", base_url });

afterEach(() => {
  testServices.allowPrivateEgress = null;
  vi.restoreAllMocks();
});

describe("PUT /api/config refuses URLs the egress policy refuses", () => {
  it.each([
    [{ model: model("http://127.0.0.1:9999/v1") }, "model.base_url: refused: loopback address 127.0.0.1"],
    [{ model: model("http://0x7f000001/v1") }, "model.base_url: refused: loopback address 127.0.0.1"],
    [{ fallback_model: model("http://2130706433/v1") }, "fallback_model.base_url: refused: loopback address 127.0.0.1"],
    [
      { auxiliary_model: model("http://[::ffff:127.0.0.1]/v1") },
      "auxiliary_model.base_url: refused: loopback address ::ffff:7f00:1 (127.0.0.1)",
    ],
    [
      { toolchain: { gitea_base_url: "http://169.254.169.254/" } },
      "toolchain.gitea_base_url: refused: cloud metadata address 169.254.169.254",
    ],
    [{ toolchain: { gitea_base_url: "http://10.1/" } }, "toolchain.gitea_base_url: refused: private address 10.0.0.1"],
    [{ model: model("https://beaver.test/api/chat") }, "model.base_url: refused: Beaver's own host beaver.test"],
  ])("%j → %s", async (body, message) => {
    const ws = await newWorkspace();
    const res = await call("PUT", "/api/config", { token: ws.admin, body });
    expect(res.status).toBe(422);
    const err = await json<Err>(res);
    expect(err.error.code).toBe("egress_refused");
    expect(err.error.message).toBe(message);
    expect(err.error.details?.[0]?.path).toBe(message.split(":")[0]);
    // Nothing was stored.
    expect(await json(await call("GET", "/api/config", { token: ws.read }))).not.toHaveProperty("model");
  });

  it("names every refused field in details", async () => {
    const ws = await newWorkspace();
    const res = await call("PUT", "/api/config", {
      token: ws.admin,
      body: {
        model: model("http://localhost/v1"),
        fallback_model: model("https://api.example.com/v1"),
        toolchain: { gitea_base_url: "http://[::1]:3000" },
      },
    });
    expect(res.status).toBe(422);
    expect((await json<Err>(res)).error.details?.map((d) => d.path)).toEqual(["model.base_url", "toolchain.gitea_base_url"]);
  });

  it("accepts public URLs, and private ones when BEAVER_ALLOW_PRIVATE_EGRESS=true", async () => {
    const ws = await newWorkspace();
    const body = { model: model("https://api.example.com/v1"), toolchain: { gitea_base_url: "https://gitea.example.org/" } };
    expect((await call("PUT", "/api/config", { token: ws.admin, body })).status).toBe(200);
    const local = { model: model("http://127.0.0.1:11434/v1"), toolchain: { gitea_base_url: "http://gitea:3000/" } };
    expect((await call("PUT", "/api/config", { token: ws.admin, body: local })).status).toBe(422);
    testServices.allowPrivateEgress = true;
    expect((await call("PUT", "/api/config", { token: ws.admin, body: local })).status).toBe(200);
    // Metadata and Beaver itself stay refused with the switch on.
    const meta = await call("PUT", "/api/config", { token: ws.admin, body: { model: model("http://169.254.169.254/v1") } });
    expect(meta.status).toBe(422);
    const self = await call("PUT", "/api/config", { token: ws.admin, body: { model: model("https://beaver.test/v1") } });
    expect((await json<Err>(self)).error.message).toBe("model.base_url: refused: Beaver's own host beaver.test");
  });
});

describe("POST/PATCH /api/agents refuse an agent model URL the egress policy refuses", () => {
  it("answers 422 naming model.base_url, and accepts a public one", async () => {
    const ws = await newWorkspace();
    const agent = { id: "jony", gitea_username: "jony", roles: ["developer"] };
    const bad = await call("POST", "/api/agents", { token: ws.admin, body: { ...agent, model: model("http://0177.0.0.1:8080/v1") } });
    expect(bad.status).toBe(422);
    expect((await json<Err>(bad)).error).toMatchObject({
      code: "egress_refused",
      message: "model.base_url: refused: loopback address 127.0.0.1",
    });
    expect((await call("GET", "/api/agents/jony", { token: ws.read })).status).toBe(404);

    const ok = await call("POST", "/api/agents", { token: ws.admin, body: { ...agent, model: model("https://llm.example.com/v1") } });
    expect(ok.status).toBe(201);
    const patch = await call("PATCH", "/api/agents/jony", { token: ws.admin, body: { model: model("http://[fd00:ec2::254]/v1") } });
    expect(patch.status).toBe(422);
    expect((await json<Err>(patch)).error.message).toBe("model.base_url: refused: cloud metadata address fd00:ec2::254");
    expect(await json(await call("GET", "/api/agents/jony", { token: ws.read }))).toMatchObject({
      model: { base_url: "https://llm.example.com/v1" },
    });
  });
});

describe("a stored URL the policy refuses at request time", () => {
  it("fails the run with the refusal and sends nothing (saved while private egress was allowed, then switched off)", async () => {
    const ws = await newWorkspace();
    testServices.allowPrivateEgress = true;
    expect((await call("PUT", "/api/config", { token: ws.admin, body: { model: model("http://127.0.0.1:11434/v1") } })).status).toBe(200);
    testServices.allowPrivateEgress = null;
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const res = await call("POST", "/api/chat", { token: ws.member, body: { message: "hello" } });
    expect(res.status).toBe(502);
    const err = await json<Err>(res);
    expect(err.error.code).toBe("provider_error");
    expect(err.error.message).toContain("refused: loopback address 127.0.0.1");
    expect(fetchSpy).not.toHaveBeenCalled();
  });
});
