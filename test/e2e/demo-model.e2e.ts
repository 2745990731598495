/**
 * The README's offline quick start, followed by a test so the README cannot drift: it starts the demo
 * model as `npm run demo-model` does (scripts/demo-model.mjs), takes the configuration JSON and the
 * first message from the README's Quick start section (changing only the port, to a free one), and
 * gets the answer the README promises through Beaver on wrangler dev — a labelled demo answer after
 * one `current_time` tool call. It also checks the demo server on its own: its startup line, its
 * model list, and a streamed completion.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { api, newWorkspace } from "./client.ts";
import { freePort } from "../support/wrangler-dev.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const quickStart = README.slice(README.indexOf("## Quick start"), README.indexOf("### Real providers"));

/** The `-d '…'` body of the first curl in the Quick start that calls `method path`. */
function curlBody(method: string, path: string): string {
  const at = quickStart.indexOf(`curl -X ${method} localhost:8787${path}`);
  expect(at, `the Quick start has curl -X ${method} localhost:8787${path}`).toBeGreaterThanOrEqual(0);
  const body = /-d '([^']+)'/.exec(quickStart.slice(at));
  expect(body, `a -d body after ${method} ${path}`).not.toBeNull();
  return body![1]!;
}

let demo: ChildProcess;
let demoUrl: string;
let startupLine: string;

beforeAll(async () => {
  const script = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts[
    "demo-model"
  ];
  expect(script).toBe("node scripts/demo-model.mjs");
  const port = await freePort();
  demo = spawn(process.execPath, ["scripts/demo-model.mjs"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  startupLine = await new Promise<string>((ok, fail) => {
    let out = "";
    demo.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) ok(out.split("\n")[0]!);
    });
    demo.once("exit", (code) => fail(new Error(`demo model exited (${code}): ${out}`)));
  });
  demoUrl = `http://127.0.0.1:${port}`;
});

afterAll(() => {
  demo?.kill("SIGTERM");
});

describe("the README's quick start with the demo model", () => {
  it("starts with the line the README quotes, labelled as a demo, and answers /v1/models", async () => {
    const quoted = /It prints `([^`]+)`/.exec(quickStart)?.[1];
    expect(quoted).toBeDefined();
    // The README shows the default port; the test runs on a free one.
    expect(startupLine.replace(demoUrl, "http://127.0.0.1:8788")).toContain(quoted!);
    expect(startupLine).toContain("DEMO");
    const models = (await (await fetch(`${demoUrl}/v1/models`)).json()) as { data: { id: string }[] };
    const config = JSON.parse(curlBody("PUT", "/api/config")) as { model: { id: string } };
    expect(models.data.map((m) => m.id)).toEqual([config.model.id]);
  });

  it("gets the answer the README promises through Beaver: one current_time tool call, then a labelled demo answer", async () => {
    const config = JSON.parse(curlBody("PUT", "/api/config")) as { model: { base_url: string } };
    expect(config.model.base_url).toBe("http://127.0.0.1:8788/v1");
    config.model.base_url = `${demoUrl}/v1`;
    const ws = await newWorkspace();
    const put = await api("PUT", "/api/config", { token: ws.token, body: config });
    expect(put.status).toBe(200);

    const message = JSON.parse(curlBody("POST", "/api/chat")) as { message: string };
    const res = await api("POST", "/api/chat", { token: ws.token, body: message });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { output_text: string; tool_iterations: number; model: string };
    const promised = /output_text` starts with `([^`]+)`/.exec(quickStart.replace(/\n/g, " "))?.[1];
    expect(promised).toBeDefined();
    expect(answer.output_text.startsWith(promised!)).toBe(true);
    expect(answer.output_text).toMatch(/utc: \d{4}-\d\d-\d\dT/); // the tool's real result came back through Beaver
    expect(answer.tool_iterations).toBe(1);
    expect(answer.model).toBe("beaver-demo");

    // Anything else gets the canned, labelled answer.
    const hello = await api("POST", "/api/chat", { token: ws.token, body: { message: "Hello Beaver" } });
    const helloAnswer = (await hello.json()) as { output_text: string; tool_iterations: number };
    expect(helloAnswer.output_text).toMatch(/^\[demo model\] .*not an AI/);
    expect(helloAnswer.output_text).toContain('You said: "Hello Beaver"');
    expect(helloAnswer.tool_iterations).toBe(0);
  });

  it("streams a completion in OpenAI's chunk format, with a usage chunk when asked", async () => {
    const res = await fetch(`${demoUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        model: "beaver-demo",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const data = (await res.text())
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => b.slice(6));
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: { delta: { content?: string } }[]; usage?: unknown });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toMatch(/^\[demo model\] /);
    expect(chunks.at(-1)!.usage).toBeDefined();
  });
});
