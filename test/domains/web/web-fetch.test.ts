/**
 * `web_fetch` (src/domains/web/fetch-tool.ts): the egress policy (loopback refused unless private
 * egress is allowed, redirect hops checked), HTML turned into Markdown without scripts or styles,
 * text passed through, binary described, the read and return caps, and the final URL after redirects.
 * The runtime's fetch is spied on as in test/storage/outbound.test.ts; the tool runs with real bindings.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import {
  WEB_FETCH_ERROR_EXCERPT_CHARS,
  WEB_FETCH_READ_BYTES,
  WEB_FETCH_RETURN_BYTES,
  webFetchTool,
} from "../../../src/domains/web/fetch-tool.ts";
import type { ToolContext } from "../../../src/runtime/tools/spec.ts";
import type { Env } from "../../../src/storage/env.ts";
import { registeredToolsets } from "../../../src/app/runtime.ts";

afterEach(() => vi.restoreAllMocks());

function ctx(allowPrivate = false): ToolContext {
  const e: Env = { ...env, BEAVER_ALLOW_PRIVATE_EGRESS: allowPrivate ? "true" : "false" };
  return {
    env: e,
    workspaceId: "ws-web",
    sessionId: "ses_web",
    runId: "run_web",
    toolCallId: "call_1",
    signal: new AbortController().signal,
    data: {},
    emitUpdate: () => undefined,
  };
}

function spyFetch(answer: (url: string) => Response) {
  const seen: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    seen.push(url);
    return answer(url);
  });
  return seen;
}

const run = (url: string, allowPrivate = false) => webFetchTool.execute({ url }, ctx(allowPrivate));

describe("web_fetch", () => {
  it("is offered in every tool set and marked idempotent", () => {
    for (const [name, factory] of registeredToolsets()) {
      expect(
        factory().some((t) => t.name === "web_fetch"),
        name,
      ).toBe(true);
    }
    expect(webFetchTool.idempotent).toBe(true);
  });

  it("refuses a loopback URL unless private egress is allowed", async () => {
    const seen = spyFetch(() => new Response("local", { headers: { "Content-Type": "text/plain" } }));
    const refused = await run("http://127.0.0.1:8787/secret");
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe("egress_refused");
    expect(refused.content).toContain("loopback address 127.0.0.1");
    expect(seen).toEqual([]);

    const allowed = await run("http://127.0.0.1:8787/secret", true);
    expect(allowed.ok).toBe(true);
    expect(allowed.content).toContain("status: 200");
    expect(allowed.content).toContain("local");
    expect(seen).toEqual(["http://127.0.0.1:8787/secret"]);
  });

  it("turns HTML into Markdown without scripts or styles", async () => {
    spyFetch(
      () =>
        new Response(
          `<html><head><title>T</title><style>body{color:red}</style></head><body><h1>Release notes</h1>` +
            `<script>alert("x")</script><p>Fixed <a href="https://example.com/bug">a bug</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`,
          { headers: { "Content-Type": "text/html; charset=utf-8" } },
        ),
    );
    const out = await run("https://example.com/notes");
    expect(out.ok).toBe(true);
    expect(out.content).toContain("content_type: text/html; charset=utf-8");
    expect(out.content).toContain("# Release notes");
    expect(out.content).toContain("[a bug](https://example.com/bug)");
    expect(out.content).toMatch(/\* one/);
    expect(out.content).not.toContain("alert");
    expect(out.content).not.toContain("color:red");
  });

  it("reports the final URL after a redirect and checks every hop", async () => {
    spyFetch((url) =>
      url === "https://example.com/old"
        ? new Response(null, { status: 301, headers: { Location: "/new" } })
        : url === "https://example.com/new"
          ? new Response("moved here", { headers: { "Content-Type": "text/plain" } })
          : new Response(null, { status: 302, headers: { Location: "http://169.254.169.254/latest/meta-data" } }),
    );
    const out = await run("https://example.com/old");
    expect(out.ok).toBe(true);
    expect(out.content).toContain("final_url: https://example.com/new");
    expect(out.content).toContain("moved here");

    const toMetadata = await run("https://example.com/evil");
    expect(toMetadata.error?.code).toBe("egress_refused");
    expect(toMetadata.content).toContain("redirect 1");
  });

  it("caps what it reads and what it returns", async () => {
    const big = "a".repeat(WEB_FETCH_READ_BYTES + 500_000);
    spyFetch(() => new Response(big, { headers: { "Content-Type": "text/plain" } }));
    const out = await run("https://example.com/big.txt");
    expect(out.ok).toBe(true);
    expect(out.content).toContain("truncated");
    const body = out.content.slice(out.content.indexOf("\n\n") + 2);
    expect(body.length).toBe(WEB_FETCH_RETURN_BYTES);
  });

  it("describes binary content instead of returning it, and reports HTTP errors", async () => {
    spyFetch((url) =>
      url.endsWith(".png")
        ? new Response(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), { headers: { "Content-Type": "image/png" } })
        : new Response("nope", { status: 404, headers: { "Content-Type": "text/plain" } }),
    );
    const png = await run("https://example.com/logo.png");
    expect(png.ok).toBe(true);
    expect(png.content).toContain("[binary content: image/png, 8 bytes; not shown]");
    const missing = await run("https://example.com/missing");
    expect(missing.ok).toBe(false);
    expect(missing.error?.code).toBe("http_error");
    expect(missing.content).toContain("status: 404");
  });

  it("summarises an upstream error page (status, type, a bounded excerpt without markup) and redacts secrets (issue 25)", async () => {
    // The sweep's probe: an error page echoing a key, in a page far longer than any summary.
    const key = "sk-abcdefghijklmnopqrstuvwxyz1234567890";
    const page =
      `<html><head><style>.x{}</style></head><body><h1>Internal error</h1><script>var k="${key}"</script>` +
      `<p>upstream said: api key ${key} is invalid</p><pre>${"trace line\n".repeat(2000)}</pre></body></html>`;
    spyFetch(() => new Response(page, { status: 500, statusText: "Internal Server Error", headers: { "Content-Type": "text/html" } }));
    const out = await run("https://example.com/broken");
    expect(out.ok).toBe(false);
    expect(out.error?.code).toBe("http_error");
    expect(out.content).toContain("status: 500 Internal Server Error");
    expect(out.content).toContain("content_type: text/html");
    expect(out.content).toContain("excerpt: Internal error upstream said: api key [redacted] is invalid");
    expect(out.content).not.toContain(key);
    expect(out.content).not.toContain("<");
    const excerpt = out.content.slice(out.content.indexOf("excerpt: ") + "excerpt: ".length);
    expect([...excerpt].length).toBeLessThanOrEqual(WEB_FETCH_ERROR_EXCERPT_CHARS + 1);
  });

  it("redacts provider-format secrets from a successful page too", async () => {
    const aws = "AKIAIOSFODNN7EXAMPLE";
    const github = `ghp_${"A1b2C3d4E5".repeat(3)}abcdef`;
    spyFetch(() => new Response(`config:\naws=${aws}\ntoken ${github}\nend`, { headers: { "Content-Type": "text/plain" } }));
    const out = await run("https://example.com/config.txt");
    expect(out.ok).toBe(true);
    expect(out.content).toContain("aws=[redacted]");
    expect(out.content).not.toContain(aws);
    expect(out.content).not.toContain(github);
    expect(out.content).toContain("end");
  });
});
