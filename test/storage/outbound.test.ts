/**
 * The egress policy at request time (README "Egress policy", src/storage/outbound.ts): every
 * request and every redirect hop is checked, so an allowed host that redirects to loopback or the
 * metadata address gets nothing; redirects are followed here (at most 5), credentials never cross
 * origins. The real provider package and the real Gitea client fetch through it, and what an
 * upstream says reaches a run only as `HTTP <status>: <short printable summary>`.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { MAX_REDIRECTS, outboundFetch } from "../../src/storage/outbound.ts";
import { egressPolicy } from "../../src/storage/egress.ts";
import { AppError } from "../../src/kernel/errors.ts";
import { summariseUpstreamText, upstreamSummary } from "../../src/kernel/upstream-text.ts";
import { resolveModels } from "../../src/runtime/agent/providers.ts";
import { ProviderError, runModelStep } from "../../src/runtime/agent/model-step.ts";
import { ToolRegistry } from "../../src/runtime/tools/registry.ts";
import { WorkspaceConfigSchema } from "../../src/app/config.ts";
import { GiteaError, giteaClient } from "../../src/domains/gitea/client.ts";
import type { Env } from "../../src/storage/env.ts";

afterEach(() => vi.restoreAllMocks());

/** Records each request the runtime's fetch is asked to send and answers from `answer`. */
function spyFetch(answer: (req: Request, n: number) => Response | Promise<Response>) {
  const seen: { url: string; method: string; redirect: RequestInit["redirect"]; auth: string | null; body: string }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    seen.push({
      url: req.url,
      method: req.method,
      redirect: init?.redirect,
      auth: req.headers.get("authorization"),
      body: await req.clone().text(),
    });
    return answer(req, seen.length);
  });
  return seen;
}

const redirect = (location: string, status = 302) => new Response(null, { status, headers: { Location: location } });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

describe("outboundFetch", () => {
  it("refuses a refused address before sending anything", async () => {
    const seen = spyFetch(() => new Response("no"));
    const err = await rejection(outboundFetch(env)("http://0x7f000001:8080/x"));
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe("egress_refused");
    expect((err as AppError).message).toBe("refused: loopback address 127.0.0.1");
    expect(seen).toEqual([]);
  });

  it("refuses a redirect from an allowed host to a loopback address, at request time", async () => {
    const seen = spyFetch(() => redirect("http://127.0.0.1:9000/admin"));
    const err = await rejection(outboundFetch(env)("https://allowed.example.com/start"));
    expect((err as AppError).code).toBe("egress_refused");
    expect((err as AppError).message).toBe("redirect 1: refused: loopback address 127.0.0.1");
    expect(seen.map((s) => s.url)).toEqual(["https://allowed.example.com/start"]);
    expect(seen[0]!.redirect).toBe("manual");
  });

  it("refuses a later hop to the metadata address in another spelling", async () => {
    const seen = spyFetch((_req, n) =>
      n === 1 ? redirect("https://b.example.com/2", 301) : redirect("http://2852039166/latest/meta-data/", 307),
    );
    const err = await rejection(outboundFetch(env)("https://a.example.com/1"));
    expect((err as AppError).message).toBe("redirect 2: refused: cloud metadata address 169.254.169.254");
    expect(seen).toHaveLength(2);
  });

  it("follows allowed redirects: relative locations, 303 turns POST into GET, credentials stay on their origin", async () => {
    const seen = spyFetch((_req, n) =>
      n === 1 ? redirect("/moved", 307) : n === 2 ? redirect("https://other.example.com/done", 303) : new Response("ok"),
    );
    const res = await outboundFetch(env)("https://a.example.com/start", {
      method: "POST",
      headers: { Authorization: "Bearer k", "Content-Type": "application/json" },
      body: '{"x":1}',
    });
    expect(await res.text()).toBe("ok");
    expect(seen.map((s) => [s.method, s.url, s.auth, s.body])).toEqual([
      ["POST", "https://a.example.com/start", "Bearer k", '{"x":1}'],
      ["POST", "https://a.example.com/moved", "Bearer k", '{"x":1}'],
      ["GET", "https://other.example.com/done", null, ""],
    ]);
    expect(seen.every((s) => s.redirect === "manual")).toBe(true);
  });

  it(`gives up after ${MAX_REDIRECTS} redirects`, async () => {
    const seen = spyFetch((_req, n) => redirect(`https://a.example.com/${n}`));
    const err = await rejection(outboundFetch(env)("https://a.example.com/0"));
    expect((err as AppError).code).toBe("upstream_unavailable");
    expect(seen).toHaveLength(MAX_REDIRECTS + 1);
  });

  it("goes through the OUTBOUND binding when there is one, with the same checks", async () => {
    const urls: string[] = [];
    const bound: Env = {
      ...env,
      OUTBOUND: {
        fetch: async (input) => {
          urls.push(String(input));
          return redirect("http://[::1]/");
        },
      },
    };
    const err = await rejection(outboundFetch(bound)("https://gitea.example.org/api/v1/version"));
    expect((err as AppError).message).toBe("redirect 1: refused: loopback address ::1");
    expect(urls).toEqual(["https://gitea.example.org/api/v1/version"]);
  });

  it("lets private addresses through when the policy allows them", async () => {
    spyFetch(() => new Response("local"));
    const fetchLocal = outboundFetch(env, egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: "true" }));
    expect(await (await fetchLocal("http://127.0.0.1:11434/v1/models")).text()).toBe("local");
  });
});

describe("model providers fetch through the egress policy", () => {
  const config = (base_url: string) => WorkspaceConfigSchema.parse({ model: { provider: "openai-compatible", id: "m1", base_url } });
  const step = async (base_url: string) =>
    runModelStep({
      models: await resolveModels(env, "ws-egress", config(base_url)),
      system: "s",
      messages: [{ role: "user", content: "hi" }],
      tools: new ToolRegistry([]),
      signal: new AbortController().signal,
      maxRetries: 0,
      callbacks: { onStart: () => {}, onTextDelta: () => {}, onReasoningDelta: () => {}, onToolCallDelta: () => {}, onAbandon: () => {} },
    });

  it("a model server that redirects to a loopback address fails the step with the refusal", async () => {
    const seen = spyFetch(() => redirect("http://127.0.0.1:2375/containers/json", 307));
    const err = await rejection(step("https://llm.example.com/v1"));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toContain("redirect 1: refused: loopback address 127.0.0.1");
    expect(seen.map((s) => s.url)).toEqual(["https://llm.example.com/v1/chat/completions"]);
  });

  it("a 10 KB HTML error page reaches the run error only as the status and a short summary", async () => {
    const page = `<!DOCTYPE html><html><head><style>body{color:red}</style><script>var secret="x";</script></head><body><h1>502 Bad Gateway</h1>${"<p>internal detail 10.0.0.7:8080</p>".repeat(300)}</body></html>`;
    expect(page.length).toBeGreaterThan(10_000);
    spyFetch(() => new Response(page, { status: 502, headers: { "Content-Type": "text/html" } }));
    const html = (await rejection(step("https://llm.example.com/v1"))) as ProviderError;
    expect(html.attempts[0]!.error).toMatch(/^HTTP 502/);
    expect(html.attempts[0]!.error.length).toBeLessThanOrEqual(220);
    expect(html.message).not.toContain("<");

    // The same page as a JSON error message (the provider turns `error.message` into its message).
    spyFetch(() => Response.json({ error: { message: page } }, { status: 500 }));
    const json = (await rejection(step("https://llm.example.com/v1"))) as ProviderError;
    const error = json.attempts[0]!.error;
    expect(error).toMatch(/^HTTP 500: 502 Bad Gateway internal detail/);
    expect(error.length).toBeLessThanOrEqual(220);
    expect(error).not.toMatch(/[<>]|secret|color:red/);
    expect(JSON.stringify(json.details).length).toBeLessThan(1_000);
  });
});

describe("the Gitea client", () => {
  const client = () => giteaClient({ baseUrl: "https://gitea.example.org/", token: "tok", timeoutMs: 2_000, fetch: outboundFetch(env) });

  it("a Gitea that redirects to the metadata address gets nothing", async () => {
    const seen = spyFetch(() => redirect("http://169.254.169.254/latest/meta-data/iam/"));
    const err = await rejection(client().getPull("acme/app", 1));
    expect(err).toBeInstanceOf(GiteaError);
    expect((err as GiteaError).message).toContain("refused: cloud metadata address 169.254.169.254");
    expect(seen).toHaveLength(1);
  });

  it("an upstream error body reaches the error only as a short printable summary", async () => {
    const message = `<html><body>${"<b>boom</b>\u0007 ".repeat(1_000)}</body></html>`;
    spyFetch(() => Response.json({ message }, { status: 500 }));
    const err = (await rejection(client().getPull("acme/app", 1))) as GiteaError;
    expect(err.status).toBe(500);
    expect(err.message).toMatch(/^Gitea answered 500 to GET \/repos\/acme\/app\/pulls\/1: boom boom/);
    expect(err.message.length).toBeLessThan(300);
    expect(err.message).not.toMatch(/[<>\u0007]/);
  });
});

describe("summariseUpstreamText", () => {
  it("drops markup, control characters and extra whitespace, and cuts at 200 characters", () => {
    expect(summariseUpstreamText("<h1>Not\u0000 Found</h1>\n\n  <script>alert(1)</script>gone")).toBe("Not Found gone");
    expect(summariseUpstreamText("a < b and c > d")).toBe("a < b and c > d");
    expect(summariseUpstreamText("x".repeat(500))).toBe(`${"x".repeat(200)}…`);
    expect(upstreamSummary(503, "<html></html>")).toBe("HTTP 503");
    expect(upstreamSummary(404, "Not Found")).toBe("HTTP 404: Not Found");
    expect(upstreamSummary(undefined, "fetch failed")).toBe("fetch failed");
  });
});
