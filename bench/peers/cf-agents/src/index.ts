// Anchor for the performance area: one AIChatAgent turn (persisted, tool loop) on a scripted
// OpenAI-compatible model, and the floor: one Durable Object call with two storage writes.
//
// Copied from the project's shared reference worker, bench/cf-agents (see README.md), with two changes for `npm run bench:peers`:
// - `?model=<id>` picks the scripted model id (default `scripted-1`, as in the original), so the same
//   scripted rules (`echo:…`, `tools-N:…`) drive both this worker and Beaver;
// - `POST /stream/:name` (added; the original has no HTTP streaming route): the same turn as
//   `/turn/:name`, with the UI message stream that `onChatMessage` returns tee'd to the HTTP response,
//   so a client can time the first text chunk. The response ends once the turn is persisted.
// - `POST /webhook/:name` (added, issue 27): the floor of a webhook target — a Gitea delivery's
//   HMAC-SHA256 signature checked, then one D1 insert (the delivery, deduplicated by its id), answered
//   202. Beaver's intake is compared with this in the same batches.
// - `POST /model-floor/:name` (added, issue 27): the floor of a turn — the floor's Durable Object
//   call plus the model: `streamText` with the same scripted model, `echo` tool and step limit, over
//   the object's history kept in memory, and two storage writes (the user message, the answer's
//   messages). No framework, no transcript format, no resume: what any harness built on the `ai` SDK
//   in a Durable Object pays at least.
import { AIChatAgent } from '@cloudflare/ai-chat';
import { getAgentByName, routeAgentRequest } from 'agents';
import { DurableObject } from 'cloudflare:workers';
import { convertToModelMessages, isStepCount, streamText, tool, type ModelMessage } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';

type Env = {
  Chat: DurableObjectNamespace<Chat>;
  Floor: DurableObjectNamespace<Floor>;
  ModelFloor: DurableObjectNamespace<ModelFloor>;
  DB: D1Database;
  LLM_URL: string;
  WEBHOOK_SECRET: string;
};

let hmacKey: Promise<CryptoKey> | null = null;
const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** The minimal webhook receiver: signature check, one insert, 202 (401 on a bad signature). */
async function webhook(req: Request, env: Env): Promise<Response> {
  const body = await req.arrayBuffer();
  hmacKey ??= crypto.subtle.importKey('raw', new TextEncoder().encode(env.WEBHOOK_SECRET), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = hex(await crypto.subtle.sign('HMAC', await hmacKey, body));
  const given = req.headers.get('X-Gitea-Signature') ?? '';
  const a = new TextEncoder().encode(expected);
  const b = new TextEncoder().encode(given);
  if (a.byteLength !== b.byteLength || !crypto.subtle.timingSafeEqual(a, b)) return new Response('bad signature', { status: 401 });
  const id = req.headers.get('X-Gitea-Delivery') ?? '';
  await env.DB.prepare('INSERT INTO deliveries (id, event, body, received_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING')
    .bind(id, req.headers.get('X-Gitea-Event-Type') ?? '', new TextDecoder().decode(body), Date.now())
    .run();
  return Response.json({ delivery_id: id }, { status: 202 });
}

export class Chat extends AIChatAgent<Env> {
  model = 'scripted-1';
  tap: WritableStream<Uint8Array> | null = null;
  piped: Promise<void> = Promise.resolve();

  async onChatMessage(onFinish: any) {
    const p = createOpenAICompatible({ name: 'scripted', baseURL: this.env.LLM_URL });
    const echo = tool({ description: 'Echo text back', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => `echoed:${text}` });
    const result = streamText({ model: p(this.model), messages: await convertToModelMessages(this.messages), tools: { echo }, stopWhen: isStepCount(8), onFinish });
    const res = result.toUIMessageStreamResponse();
    if (!this.tap || !res.body) return res;
    const [mine, theirs] = res.body.tee();
    this.piped = theirs.pipeTo(this.tap, { preventClose: true }).catch(() => undefined);
    return new Response(mine, { status: res.status, headers: res.headers });
  }
  async turn(text: string, model?: string): Promise<string> {
    if (model) this.model = model;
    await this.saveMessages((msgs: any[]) => [...msgs, { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] }]);
    const last = this.messages[this.messages.length - 1] as any;
    return (last?.parts ?? []).filter((p: any) => p.type === 'text').map((p: any) => p.text).join('');
  }
  async streamTurn(text: string, model?: string): Promise<ReadableStream<Uint8Array>> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    this.tap = writable;
    const done = this.turn(text, model).finally(async () => {
      this.tap = null;
      await this.piped; // pipeTo holds the writable's lock until the UI stream ends
      await writable.close().catch(() => undefined);
    });
    this.ctx.waitUntil(done);
    return readable;
  }
}

export class Floor extends DurableObject<Env> {
  async write(v: string) {
    const n = ((await this.ctx.storage.get<number>('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    await this.ctx.storage.put(`v${n}`, v);
    return n;
  }
}

export class ModelFloor extends DurableObject<Env> {
  history: ModelMessage[] = [];
  async turn(text: string, model: string): Promise<string> {
    const user: ModelMessage = { role: 'user', content: text };
    const n = this.history.length;
    await this.ctx.storage.put(`m${n}`, user);
    this.history.push(user);
    const p = createOpenAICompatible({ name: 'scripted', baseURL: this.env.LLM_URL });
    const echo = tool({ description: 'Echo text back', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => `echoed:${text}` });
    const result = streamText({ model: p(model), messages: this.history, tools: { echo }, stopWhen: isStepCount(8) });
    const out = await result.text;
    const answer = (await result.response).messages;
    this.history.push(...answer);
    await this.ctx.storage.put(`m${n + 1}`, answer);
    return out;
  }
}

export default {
  async fetch(req: Request, env: Env): Promise<Response> {
    const url = new URL(req.url);
    const [, kind, name] = url.pathname.split('/');
    const model = url.searchParams.get('model') ?? undefined;
    if (kind === 'turn' && name) {
      const agent = await getAgentByName(env.Chat as any, name);
      const out = await (agent as any).turn(await req.text(), model);
      return Response.json({ output_text: out });
    }
    if (kind === 'stream' && name) {
      const agent = await getAgentByName(env.Chat as any, name);
      const body = await (agent as any).streamTurn(await req.text(), model);
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    }
    if (kind === 'webhook' && req.method === 'POST') return webhook(req, env);
    if (kind === 'model-floor' && name) {
      const out = await env.ModelFloor.getByName(name).turn(await req.text(), model ?? 'scripted-1');
      return Response.json({ output_text: out });
    }
    if (kind === 'floor' && name) {
      const n = await env.Floor.getByName(name).write(await req.text());
      return Response.json({ n });
    }
    return (await routeAgentRequest(req, env)) || new Response('not found', { status: 404 });
  },
};
