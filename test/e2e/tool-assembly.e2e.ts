/**
 * Tool assembly on a real `wrangler dev` (docs/agent-loop.md, "Tool assembly"; seed tools-blueprint):
 * with `embedding_model` configured, the tools not always offered are ranked by embedding similarity
 * to the message (the scripted server's `/v1/embeddings`), so a tool whose description means what the
 * message asks is offered over one that doesn't even when no word is shared; without it, keywords rank
 * them. `runtime.always_tools` names are always offered; descriptions are embedded once per isolate.
 */
import { describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

interface Snapshot {
  type: string;
  run_id: string;
  tools: { chosen: { name: string; reason: string; score?: number; ranked_by?: string }[]; left_out: string[] };
}

async function runOnce(token: string, sid: string, content: string): Promise<string> {
  const res = await api("POST", `/api/sessions/${sid}/messages?wait=true`, { token, body: { content } });
  expect(res.status).toBe(200);
  const run = (await res.json()) as { run_id: string; status: string };
  expect(run.status).toBe("completed");
  return run.run_id;
}

async function snapshotOf(token: string, sid: string, runId: string): Promise<Snapshot> {
  const res = await api("GET", `/api/sessions/${sid}/events?include_hidden=true&limit=1000`, { token });
  const { events } = (await res.json()) as { events: Snapshot[] };
  return events.find((e) => e.type === "system_prompt_snapshotted" && e.run_id === runId)!;
}

// German, so the message shares no word with any tool description: keywords cannot tell the tools apart.
const MESSAGE = "Wie spät ist es gerade in Tokio?";

describe("tool assembly: always tools, then embedding top-k", () => {
  it("offers the tool whose description matches the message by embedding, over one that doesn't", async () => {
    const { token } = await newWorkspace();
    const chat = `echo:tools-${Date.now()}`;
    const embedder = `embed-${Date.now()}`;
    await models.embeddings(embedder, [
      { contains: "spät", vector: [1, 0] },
      { contains: "current date and time", vector: [1, 0] },
    ]);
    const runtime = { max_tools: 4 };
    const config = {
      model: { provider: "openai-compatible", id: chat, base_url: `${modelUrl}/v1` },
      embedding_model: { provider: "openai-compatible", id: embedder, base_url: `${modelUrl}/v1` },
      runtime,
    };
    expect((await api("PUT", "/api/config", { token, body: config })).status).toBe(200);
    const sid = ((await (await api("POST", "/api/sessions", { token, body: { title: "tools" } })).json()) as { id: string }).id;
    const first = await runOnce(token, sid, MESSAGE);

    const snap = await snapshotOf(token, sid, first);
    expect(snap.tools.chosen).toContainEqual({ name: "current_time", reason: "relevant", score: 1, ranked_by: "embedding" });
    expect(snap.tools.chosen).toContainEqual({ name: "session_search", reason: "configured" });
    expect(snap.tools.chosen).toContainEqual({ name: "skill_view", reason: "always" });
    expect(snap.tools.left_out).toContain("echo");
    const [request] = await models.requests(chat);
    const offered = ((request!.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
    expect(offered).toContain("current_time");
    expect(offered).not.toContain("echo");
    const embedded = (await models.embeddingRequests(embedder)).flat();
    expect(embedded.some((t) => t.includes("current date and time"))).toBe(true);

    // The next run embeds its message, not the descriptions again (kept per isolate).
    const before = (await models.embeddingRequests(embedder)).length;
    const second = await runOnce(token, sid, "Und wie spät ist es in Lima?");
    const later = (await models.embeddingRequests(embedder)).slice(before).flat();
    expect(later.some((t) => t.includes("current date and time"))).toBe(false);
    expect((await snapshotOf(token, sid, second)).tools.chosen).toContainEqual(expect.objectContaining({ name: "current_time" }));
  });

  it("without an embedding model, ranks by keywords (a tie keeps tool-set order)", async () => {
    const { token } = await newWorkspace();
    const chat = `echo:tools-kw-${Date.now()}`;
    const config = { model: { provider: "openai-compatible", id: chat, base_url: `${modelUrl}/v1` }, runtime: { max_tools: 4 } };
    expect((await api("PUT", "/api/config", { token, body: config })).status).toBe(200);
    const sid = ((await (await api("POST", "/api/sessions", { token, body: { title: "tools" } })).json()) as { id: string }).id;
    const run = await runOnce(token, sid, MESSAGE);
    const snap = await snapshotOf(token, sid, run);
    expect(snap.tools.chosen).toContainEqual({ name: "echo", reason: "relevant", score: 0, ranked_by: "keywords" });
    expect(snap.tools.left_out).toContain("current_time");
  });
});
