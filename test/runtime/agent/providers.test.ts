import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { MockLanguageModelV4 } from "ai/test";
import { DEFAULT_WORKERS_AI_MODEL, resolveModels, type ModelFactory, type ModelHandle } from "../../../src/runtime/agent/providers.ts";
import { ProviderError, runModelStep } from "../../../src/runtime/agent/model-step.ts";
import { AppError } from "../../../src/kernel/errors.ts";
import type { ModelEntry } from "../../../src/storage/config/schema.ts";
import { WorkspaceConfigSchema, type WorkspaceConfigInput } from "../../../src/app/config.ts";
import { ToolRegistry } from "../../../src/runtime/tools/registry.ts";
import type { Env } from "../../../src/storage/env.ts";
import { call, newWorkspace } from "../../support/api.ts";
import { statusOf } from "../../../src/edge/http/errors.ts";
import { loadConfigAndRevision } from "../../../src/storage/config/store.ts";

const config = (input: WorkspaceConfigInput) => WorkspaceConfigSchema.parse(input);
const modelOf = (h: ModelHandle) => h.model as { provider: string; modelId: string };
const withAi = (): Env => ({ ...env, AI: { run: async () => ({ response: "" }) } as unknown as Ai });

async function errorOf(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

async function putSecret(admin: string, name: string, value: string) {
  const res = await call("PUT", `/api/secrets/${name}`, { token: admin, body: { value } });
  expect(res.status).toBe(200);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("resolveModels: what is configured", () => {
  it("without a model and without Workers AI answers no_model_configured with how to configure", async () => {
    const err = await errorOf(resolveModels(env, "ws-none", config({})));
    expect(err.code).toBe("no_model_configured");
    expect(statusOf(err.code)).toBe(422);
    expect(err.message).toContain("PUT /api/config");
    expect(err.message).toContain("api_key_secret");
  });

  it("without a model but with Workers AI bound uses Workers AI's default model", async () => {
    const models = await resolveModels(withAi(), "ws-none", config({}));
    expect(models.main).toMatchObject({ role: "main", provider: "workers-ai", modelId: DEFAULT_WORKERS_AI_MODEL });
    expect(modelOf(models.main).modelId).toBe(DEFAULT_WORKERS_AI_MODEL);
    expect(models.fallback).toBeNull();
    expect(models.auxiliary).toBeNull();
  });

  it("refuses a workers-ai entry when the binding is missing", async () => {
    const err = await errorOf(resolveModels(env, "ws-none", config({ model: { provider: "workers-ai", id: "@cf/x" } })));
    expect(err.code).toBe("no_model_configured");
    expect(err.message).toContain("AI binding");
  });

  it("requires base_url for openai-compatible and a key secret for hosted providers", async () => {
    const noUrl = await errorOf(resolveModels(env, "ws-none", config({ model: { provider: "openai-compatible", id: "m" } })));
    expect(noUrl.code).toBe("no_model_configured");
    expect(noUrl.message).toContain("model: provider 'openai-compatible' needs base_url");
    for (const provider of ["openai", "anthropic", "google"] as const) {
      const noKey = await errorOf(
        resolveModels(
          env,
          "ws-none",
          config({
            model: { provider: "openai-compatible", id: "m", base_url: "https://x.test/v1" },
            fallback_model: { provider, id: "m" },
          }),
        ),
      );
      expect(noKey.message).toContain(`fallback_model: provider '${provider}' needs api_key_secret`);
    }
  });

  it("names a missing secret without revealing anything else", async () => {
    const err = await errorOf(
      resolveModels(env, "ws-none", config({ model: { provider: "anthropic", id: "claude-x", api_key_secret: "ANTHROPIC_KEY_MISSING" } })),
    );
    expect(err.code).toBe("no_model_configured");
    expect(err.message).toContain("secret 'ANTHROPIC_KEY_MISSING'");
    expect(err.message).toContain("PUT /api/secrets/ANTHROPIC_KEY_MISSING");
  });

  it("builds each provider kind with the matching ai SDK provider and copies limits", async () => {
    const ws = await newWorkspace();
    await putSecret(ws.admin, "K", "sk-test-provider-key");
    const cases: [ModelEntry, string][] = [
      [{ provider: "openai-compatible", id: "local-model", base_url: "https://llm.test/v1/" }, "openai-compatible.chat"],
      [{ provider: "openai", id: "gpt-x", api_key_secret: "K" }, "openai.responses"],
      [{ provider: "anthropic", id: "claude-x", api_key_secret: "K" }, "anthropic.messages"],
      [{ provider: "google", id: "gemini-x", api_key_secret: "K" }, "google.generative-ai"],
      [{ provider: "workers-ai", id: "@cf/meta/llama-3.1-8b-instruct" }, "workersai.chat"],
    ];
    for (const [entry, sdkProvider] of cases) {
      const models = await resolveModels(withAi(), ws.id, config({ model: { ...entry, max_tokens: 1234, context_window: 64000 } }));
      expect(modelOf(models.main).provider).toBe(sdkProvider);
      expect(modelOf(models.main).modelId).toBe(entry.id);
      expect(models.main).toMatchObject({ provider: entry.provider, modelId: entry.id, maxTokens: 1234, contextWindow: 64000 });
    }
  });

  it("lets an agent's own model replace main and builds fallback and auxiliary from config", async () => {
    const roles: [string, string][] = [];
    const factory: ModelFactory = (entry, { role }) => {
      roles.push([entry.id, role]);
      return new MockLanguageModelV4({ modelId: entry.id });
    };
    // `default` is a workspace SINGLE_TENANT_KEY is lent to (vitest.config.ts).
    const models = await resolveModels(
      env,
      "default",
      config({
        model: { provider: "openai-compatible", id: "workspace-main", base_url: "https://a.test/v1" },
        fallback_model: { provider: "openai-compatible", id: "fb", base_url: "https://b.test/v1" },
        auxiliary_model: { provider: "openai-compatible", id: "aux", base_url: "https://c.test/v1" },
      }),
      { override: { provider: "openai-compatible", id: "agent-own", base_url: "https://d.test/v1" }, factory },
    );
    expect(models.main.modelId).toBe("agent-own");
    expect(models.fallback?.modelId).toBe("fb");
    expect(models.auxiliary?.modelId).toBe("aux");
    expect(roles.sort()).toEqual([
      ["agent-own", "main"],
      ["aux", "auxiliary"],
      ["fb", "fallback"],
    ]);
    expect((models.main.model as MockLanguageModelV4).modelId).toBe("agent-own");
  });

  it("still checks secrets when another model factory is given", async () => {
    const factory: ModelFactory = () => new MockLanguageModelV4();
    const err = await errorOf(
      resolveModels(env, "ws-none", config({ model: { provider: "openai", id: "m", api_key_secret: "NOT_SET_ANYWHERE" } }), { factory }),
    );
    expect(err.code).toBe("no_model_configured");
  });
});

describe("resolveModels: API keys reach the provider and never the errors", () => {
  const sse = (chunks: unknown[]) =>
    new Response(chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n", {
      headers: { "Content-Type": "text/event-stream" },
    });
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "m1",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const callbacks = {
    onStart: () => {},
    onTextDelta: () => {},
    onReasoningDelta: () => {},
    onToolCallDelta: () => {},
    onAbandon: () => {},
  };
  const step = (models: Awaited<ReturnType<typeof resolveModels>>) =>
    runModelStep({
      models,
      system: "s",
      messages: [{ role: "user", content: "hi" }],
      tools: new ToolRegistry([]),
      signal: new AbortController().signal,
      maxRetries: 0,
      callbacks,
    });

  it("sends the workspace secret as the bearer key of an openai-compatible server", async () => {
    const ws = await newWorkspace();
    const key = "sk-workspace-secret-abcdef123456";
    await putSecret(ws.admin, "MODEL_KEY", key);
    const seen: { url: string; auth: string | null; body: Record<string, unknown> }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      seen.push({ url: req.url, auth: req.headers.get("authorization"), body: (await req.json()) as Record<string, unknown> });
      return sse([chunk({ role: "assistant", content: "Hi" }), chunk({ content: " there" }, "stop")]);
    });
    const models = await resolveModels(
      env,
      ws.id,
      config({ model: { provider: "openai-compatible", id: "m1", base_url: "https://llm.test/v1", api_key_secret: "MODEL_KEY" } }),
    );
    const out = await step(models);
    expect(out.text).toBe("Hi there");
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe("https://llm.test/v1/chat/completions");
    expect(seen[0]!.auth).toBe(`Bearer ${key}`);
    expect(seen[0]!.body).toMatchObject({ model: "m1", stream: true, stream_options: { include_usage: true } });
  });

  it("reuses the key read under one workspace revision, and a rotated key reaches the next run's revision", async () => {
    const ws = await newWorkspace();
    await putSecret(ws.admin, "MODEL_KEY", "sk-first-key-000001");
    const cfg = config({
      model: { provider: "openai-compatible", id: "m1", base_url: "https://llm.test/v1", api_key_secret: "MODEL_KEY" },
    });
    const auths: (string | null)[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      auths.push(new Request(input, init).headers.get("authorization"));
      return sse([chunk({ role: "assistant", content: "Hi" }, "stop")]);
    });
    const revisionNow = async () => (await loadConfigAndRevision(env, ws.id)).revision;
    const first = await revisionNow();
    expect(first).not.toBeNull();
    await step(await resolveModels(env, ws.id, cfg, { revision: first }));
    await putSecret(ws.admin, "MODEL_KEY", "sk-second-key-00002");
    const second = await revisionNow();
    expect(second).not.toBe(first);
    // What a run opening now sees (the revision read with its config): the rotated key.
    await step(await resolveModels(env, ws.id, cfg, { revision: second }));
    expect(auths).toEqual(["Bearer sk-first-key-000001", "Bearer sk-second-key-00002"]);
  });

  it("falls back to a lent Worker secret of the same name and redacts the key from provider errors", async () => {
    vi.spyOn(globalThis, "fetch").mockImplementation(
      async () =>
        new Response(JSON.stringify({ error: { message: "Incorrect API key provided: from-worker-env", type: "invalid_request_error" } }), {
          status: 401,
          headers: { "Content-Type": "application/json" },
        }),
    );
    // `default` is a workspace SINGLE_TENANT_KEY is lent to (vitest.config.ts).
    const models = await resolveModels(
      env,
      "default",
      config({ model: { provider: "openai-compatible", id: "m1", base_url: "https://llm.test/v1", api_key_secret: "SINGLE_TENANT_KEY" } }),
    );
    const err = await step(models).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    const pe = err as ProviderError;
    expect(pe.message).toContain("HTTP 401");
    expect(pe.message).toContain("[redacted]");
    expect(pe.message).not.toContain("from-worker-env");
    expect(JSON.stringify(pe.details)).not.toContain("from-worker-env");
  });
});
