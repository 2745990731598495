/**
 * Issue 25, item 5: a public-looking name that resolves to loopback (`localtest.me`, `127.0.0.1.nip.io`)
 * passes the Worker's egress policy, which judges names by their spelling. With an `OUTBOUND` egress
 * proxy that resolves and checks (test/support/egress-proxy.ts), the same probe is refused — as an
 * `egress_refused` error, for `web_fetch` in a real run and for any outbound request — and never sent.
 */
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { outboundFetch } from "../../src/storage/outbound.ts";
import type { Env } from "../../src/storage/env.ts";
import { AppError } from "../../src/kernel/errors.ts";
import { checkEgress, egressPolicy } from "../../src/storage/egress.ts";
import { resolvingProxy } from "../support/egress-proxy.ts";
import { setOutboundFetch } from "../support/test-services.ts";
import { ScriptedModel, doEvents, newSession, scriptedWorkspace, text, toolCalls } from "../support/sessions.ts";
import { call } from "../support/api.ts";

afterEach(() => setOutboundFetch(null));

const HOSTS = {
  "localtest.me": ["127.0.0.1"],
  "127.0.0.1.nip.io": ["127.0.0.1"],
  "metadata.attacker.example": ["93.184.216.34", "169.254.169.254"],
  "docs.example.com": ["93.184.216.34"],
};

function proxyAnsweringOk() {
  return resolvingProxy(HOSTS, async () => new Response("public page", { headers: { "Content-Type": "text/plain" } }));
}

describe("an egress proxy that resolves and checks", () => {
  it("the probe passes the Worker's own policy: only a resolving proxy can stop it", () => {
    const policy = egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: "false" });
    expect(checkEgress("http://localtest.me:8787/api/config", policy).allowed).toBe(true);
    expect(checkEgress("http://127.0.0.1.nip.io/", policy).allowed).toBe(true);
  });

  it.each([
    ["http://localtest.me:8787/api/config", "localtest.me resolves to 127.0.0.1: loopback address 127.0.0.1"],
    ["http://127.0.0.1.nip.io/", "127.0.0.1.nip.io resolves to 127.0.0.1: loopback address 127.0.0.1"],
    ["http://metadata.attacker.example/latest/meta-data/", "resolves to 169.254.169.254"],
  ])("refuses %s as egress_refused and sends nothing", async (url, reason) => {
    const proxy = proxyAnsweringOk();
    const bound: Env = { ...env, OUTBOUND: { fetch: proxy.fetch } };
    const err = await outboundFetch(bound)(url).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("egress_refused");
    expect((err as AppError).message).toContain("refused by the egress proxy");
    expect((err as AppError).message).toContain(reason);
    expect(proxy.forwarded).toEqual([]);
  });

  it("lets a name that resolves to a public address through", async () => {
    const proxy = proxyAnsweringOk();
    const res = await outboundFetch({ ...env, OUTBOUND: { fetch: proxy.fetch } })("https://docs.example.com/page");
    expect(await res.text()).toBe("public page");
    expect(proxy.forwarded).toEqual([{ url: "https://docs.example.com/page", address: "93.184.216.34" }]);
  });

  it("ignores the refusal header from anything but the proxy binding", async () => {
    const upstream: Env = { ...env, OUTBOUND: undefined };
    const original = globalThis.fetch;
    globalThis.fetch = async () => new Response("hello", { headers: { "X-Beaver-Egress": "refused" } });
    try {
      expect(await (await outboundFetch(upstream)("https://docs.example.com/")).text()).toBe("hello");
    } finally {
      globalThis.fetch = original;
    }
  });

  it("a run's web_fetch of a name resolving to loopback gets egress_refused from the proxy", async () => {
    const proxy = proxyAnsweringOk();
    setOutboundFetch(proxy.fetch);
    const model = new ScriptedModel([
      toolCalls({ id: "w1", name: "web_fetch", args: { url: "http://localtest.me:8787/api/config" } }),
      text("ok"),
    ]);
    const ws = await scriptedWorkspace(model);
    const sessionId = await newSession(ws);
    const res = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.member, body: { content: "fetch it" } });
    expect(res.status).toBe(200);
    const results = (await doEvents(sessionId, ws.id)).flatMap((e) =>
      e.type === "message" && e.message.role === "tool_result" ? [e.message] : [],
    );
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ is_error: true });
    expect(results[0]!.content).toContain(
      "Error (egress_refused): localtest.me:8787: refused by the egress proxy: localtest.me resolves to 127.0.0.1",
    );
    expect(proxy.forwarded).toEqual([]);
    expect(proxy.refused.map((r) => r.url)).toEqual(["http://localtest.me:8787/api/config"]);
  });
});
