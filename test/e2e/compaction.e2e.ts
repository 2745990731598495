/**
 * Compaction end to end (docs/sessions.md, "Compaction"): real `wrangler dev` with the scripted
 * OpenAI-compatible server through the real provider package. A session whose model has a small
 * `context_window` compacts (the main model summarises: no auxiliary model is set), answers
 * afterwards, and its context starts at the summary.
 */
import { describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

interface Message {
  role: string;
  content?: string;
  text?: string;
}

describe("compaction over wrangler dev", () => {
  it("a session with a small context_window compacts, answers afterwards, and GET /context starts at the summary", async () => {
    const model = `echo:compact-${Date.now()}`;
    const ws = await newWorkspace();
    const config = {
      model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1`, context_window: 6_000 },
      runtime: { compact_at_share: 0.5 },
    };
    expect((await api("PUT", "/api/config", { token: ws.token, body: config })).status).toBe(200);
    const created = await api("POST", "/api/sessions", { token: ws.token, body: {} });
    const id = ((await created.json()) as { id: string }).id;

    let compactedAt = -1;
    for (let turn = 0; turn < 6 && compactedAt < 0; turn++) {
      const res = await api("POST", `/api/sessions/${id}/messages?wait=true`, {
        token: ws.token,
        body: { content: `question ${turn} ${"q".repeat(1_600)}` },
      });
      expect(res.status).toBe(200);
      const result = (await res.json()) as { status: string; output_text: string };
      expect(result.status).toBe("completed");
      expect(result.output_text).toContain(`echo: question ${turn}`);
      const events = await api("GET", `/api/sessions/${id}/events?limit=1000`, { token: ws.token });
      const types = ((await events.json()) as { events: { type: string }[] }).events.map((e) => e.type);
      if (types.includes("compact")) compactedAt = turn;
    }
    expect(compactedAt).toBeGreaterThan(0);

    // The summary call went to the main model with the compaction prompt, before that turn's answer.
    const requests = await models.requests(model);
    const summaryCalls = requests.filter((r) => JSON.stringify(r.body.messages).includes("You compact the earlier part"));
    expect(summaryCalls).toHaveLength(1);
    expect(JSON.stringify(summaryCalls[0]!.body.messages)).toContain("question 0 ");

    // The next turn answers, and the context opens with the summary.
    const next = await api("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.token, body: { content: "and now?" } });
    expect(((await next.json()) as { output_text: string }).output_text).toBe("echo: and now?");
    const ctx = (await (await api("GET", `/api/sessions/${id}/context`, { token: ws.token })).json()) as { messages: Message[] };
    expect(ctx.messages[0]?.role).toBe("user");
    expect(ctx.messages[0]?.content).toContain("The earlier part of this conversation was compacted");
    expect(JSON.stringify(ctx.messages.slice(1))).not.toContain("question 0 ");
    expect(ctx.messages.at(-1)).toMatchObject({ role: "assistant", text: "echo: and now?" });
    // The last request to the model started the same way.
    const last = (await models.requests(model)).at(-1)!;
    const firstUser = last.body.messages.find((m) => m.role === "user");
    expect(JSON.stringify(firstUser)).toContain("The earlier part of this conversation was compacted");
  });
});
