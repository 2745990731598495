/**
 * The egress policy end to end (README "Egress policy"): a second `wrangler dev` started without
 * `BEAVER_ALLOW_PRIVATE_EGRESS` refuses a model and a Gitea on loopback — the scripted servers the
 * suite's own Worker (private egress allowed) talks to — when the configuration is saved, naming
 * the field, while a public URL is accepted.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startWranglerDev, type DevServer } from "../support/wrangler-dev.ts";
import { api, baseUrl, newWorkspace } from "./client.ts";

let strict: DevServer;

beforeAll(async () => {
  strict = await startWranglerDev({ vars: { BEAVER_ALLOW_PRIVATE_EGRESS: "false" } });
});

afterAll(async () => {
  await strict?.stop();
});

async function putConfig(body: unknown): Promise<{ status: number; json: { error?: { code: string; message: string } } }> {
  const res = await fetch(`${strict.url}/api/config`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${strict.adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
}

describe("egress policy in wrangler dev without BEAVER_ALLOW_PRIVATE_EGRESS", () => {
  it("refuses the scripted model server and the fake Gitea on loopback, naming the field", async () => {
    const model = { provider: "openai-compatible", id: "echo:egress", base_url: `${inject("modelUrl")}/v1` };
    const refusedModel = await putConfig({ model });
    expect(refusedModel.status).toBe(422);
    expect(refusedModel.json.error).toMatchObject({
      code: "egress_refused",
      message: "model.base_url: refused: loopback address 127.0.0.1",
    });

    const refusedGitea = await putConfig({ toolchain: { gitea_base_url: inject("giteaUrl") } });
    expect(refusedGitea.status).toBe(422);
    expect(refusedGitea.json.error?.message).toBe("toolchain.gitea_base_url: refused: loopback address 127.0.0.1");

    // Beaver's own address is on loopback here, refused as such.
    const self = await putConfig({ model: { ...model, base_url: `${strict.url}/v1` } });
    expect(self.json.error?.message).toBe("model.base_url: refused: loopback address 127.0.0.1");

    expect((await putConfig({ model: { ...model, base_url: "https://llm.example.com/v1" } })).status).toBe(200);
  });

  it("with private egress allowed (the suite's own Worker) accepts the scripted server but not Beaver's own address", async () => {
    const ws = await newWorkspace();
    const put = (base_url: string) =>
      api("PUT", "/api/config", { token: ws.token, body: { model: { provider: "openai-compatible", id: "echo:egress", base_url } } });
    expect((await put(`${inject("modelUrl")}/v1`)).status).toBe(200);
    const self = await put(`${baseUrl()}/v1`);
    expect(self.status).toBe(422);
    expect(((await self.json()) as { error: { message: string } }).error.message).toBe(
      `model.base_url: refused: Beaver's own host ${new URL(baseUrl()).host}`,
    );
  });
});
