/**
 * Turns a workspace's model configuration into `ai` SDK model objects for one run: main (or an
 * agent's own override), fallback and auxiliary. API keys are resolved here from workspace secrets
 * and never leave this module except inside the provider objects; errors name secrets, not values.
 */
import type { LanguageModel } from "ai";
import { providerPackages } from "./provider-packages.ts";
import type { Env } from "../../storage/env.ts";
import type { ModelEntry, ProviderKind, WorkspaceConfig } from "../../storage/config/schema.ts";
import { resolveSecretAt } from "../../storage/secrets/store.ts";
import { outboundFetch } from "../../storage/outbound.ts";
import { AppError } from "../../kernel/errors.ts";
import { setBounded } from "../../kernel/memo.ts";

export interface ModelHandle {
  role: "main" | "fallback" | "auxiliary";
  provider: ProviderKind;
  modelId: string;
  /** An `ai` SDK v7 model object. */
  model: LanguageModel;
  maxTokens?: number;
  contextWindow?: number;
}

export interface ResolvedModels {
  main: ModelHandle;
  fallback: ModelHandle | null;
  auxiliary: ModelHandle | null;
}

/** What a model factory knows when it builds one model (the key is already resolved and checked). */
export interface ModelBuild {
  env: Env;
  role: ModelHandle["role"];
  apiKey: string | undefined;
}

/** Builds an `ai` SDK model for a config entry; `providerModel` in production, mock models in tests. */
export type ModelFactory = (entry: ModelEntry, build: ModelBuild) => LanguageModel | Promise<LanguageModel>;

/** Used when nothing is configured but the Worker has a Workers AI binding; it supports tool calls. */
export const DEFAULT_WORKERS_AI_MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";

/** Providers that cannot work without an API key (openai-compatible servers may be keyless). */
const NEEDS_API_KEY: ReadonlySet<ProviderKind> = new Set(["openai", "anthropic", "google"]);

const HOW_TO_CONFIGURE =
  'PUT /api/config with a model entry, for example {"model":{"provider":"openai-compatible","id":"<model id>",' +
  '"base_url":"https://<host>/v1","api_key_secret":"<SECRET_NAME>"}}, and store the key with PUT /api/secrets/<SECRET_NAME>';

/** Secret values each handle was built with, so error text from its calls can be scrubbed. */
const secretsByHandle = new WeakMap<ModelHandle, string[]>();

/** Replaces any API key this handle was built with by `[redacted]` (provider errors may echo requests). */
export function redactSecrets(handle: ModelHandle, text: string): string {
  let out = text;
  for (const secret of secretsByHandle.get(handle) ?? []) {
    if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  }
  return out;
}

export interface ResolveOptions {
  /** Replaces the workspace's main model for this run (an agent's own model). */
  override?: ModelEntry | undefined;
  /** How model objects are built; defaults to the provider packages. */
  factory?: ModelFactory;
  /**
   * The workspace revision the run read with its config: an `api_key_secret` resolved under the same
   * revision is reused per isolate (any change to the workspace's secrets gives it a new revision),
   * saving a D1 read and an AES-GCM open per model per run (docs/performance.md, fourth round).
   */
  revision?: string | null;
}

export async function resolveModels(
  env: Env,
  workspaceId: string,
  config: WorkspaceConfig,
  options: ResolveOptions = {},
): Promise<ResolvedModels> {
  const mainEntry = options.override ?? config.model ?? defaultMainEntry(env);
  const factory = options.factory ?? providerModel;
  const [main, fallback, auxiliary] = await Promise.all([
    buildHandle(env, workspaceId, mainEntry, "main", factory, options.revision ?? null),
    config.fallback_model ? buildHandle(env, workspaceId, config.fallback_model, "fallback", factory, options.revision ?? null) : null,
    config.auxiliary_model ? buildHandle(env, workspaceId, config.auxiliary_model, "auxiliary", factory, options.revision ?? null) : null,
  ]);
  return { main, fallback, auxiliary };
}

function defaultMainEntry(env: Env): ModelEntry {
  if (env.AI) return { provider: "workers-ai", id: DEFAULT_WORKERS_AI_MODEL };
  throw new AppError("no_model_configured", `No model is configured for this workspace and Workers AI is not bound. ${HOW_TO_CONFIGURE}`);
}

const CONFIG_KEY: Record<ModelHandle["role"], string> = { main: "model", fallback: "fallback_model", auxiliary: "auxiliary_model" };

async function buildHandle(
  env: Env,
  workspaceId: string,
  entry: ModelEntry,
  role: ModelHandle["role"],
  factory: ModelFactory,
  revision: string | null,
): Promise<ModelHandle> {
  const where = CONFIG_KEY[role];
  if (entry.provider === "openai-compatible" && !entry.base_url) {
    throw new AppError(
      "no_model_configured",
      `${where}: provider 'openai-compatible' needs base_url (the server's /v1 address). ${HOW_TO_CONFIGURE}`,
    );
  }
  if (entry.provider === "workers-ai" && !env.AI) {
    throw new AppError(
      "no_model_configured",
      `${where}: provider 'workers-ai' needs the Worker's AI binding, which is not bound here. ${HOW_TO_CONFIGURE}`,
    );
  }
  if (NEEDS_API_KEY.has(entry.provider) && !entry.api_key_secret) {
    throw new AppError(
      "no_model_configured",
      `${where}: provider '${entry.provider}' needs api_key_secret naming a secret that holds the API key. ${HOW_TO_CONFIGURE}`,
    );
  }
  const apiKey = entry.api_key_secret ? await resolveSecretAt(env, workspaceId, entry.api_key_secret, revision) : undefined;
  if (entry.api_key_secret && apiKey === undefined) {
    throw new AppError(
      "no_model_configured",
      `${where}: secret '${entry.api_key_secret}' named by api_key_secret is not set; store it with PUT /api/secrets/${entry.api_key_secret}`,
    );
  }

  const model = await factory(entry, { env, role, apiKey });
  const handle: ModelHandle = { role, provider: entry.provider, modelId: entry.id, model };
  if (entry.max_tokens !== undefined) handle.maxTokens = entry.max_tokens;
  if (entry.context_window !== undefined) handle.contextWindow = entry.context_window;
  if (apiKey) secretsByHandle.set(handle, [apiKey]);
  return handle;
}

/**
 * Models built per isolate, by binding set and everything that shapes one: a provider model holds
 * only its settings (no request state), and building one costs about a millisecond and a half of
 * CPU (the provider's response schemas), which every run paid twice (main and auxiliary model;
 * docs/performance.md, "CPU per turn"). Bounded: the oldest entry goes past MODEL_CACHE_SIZE.
 */
const MODEL_CACHE_SIZE = 32;
const builtModels = new WeakMap<object, Map<string, LanguageModel>>();

/**
 * The production model factory: the `ai` SDK provider package for each provider kind (loaded on the
 * kind's first model, provider-packages.ts), built once per isolate.
 */
export const providerModel: ModelFactory = async (entry, deps) => {
  const key = JSON.stringify([entry.provider, entry.id, entry.base_url ?? null, deps.apiKey ?? null]);
  let models = builtModels.get(deps.env);
  if (!models) builtModels.set(deps.env, (models = new Map()));
  const cached = models.get(key);
  if (cached) return cached;
  const model = await buildProviderModel(entry, deps);
  setBounded(models, key, model, MODEL_CACHE_SIZE);
  return model;
};

const buildProviderModel = async (entry: ModelEntry, { env, apiKey }: ModelBuild): Promise<LanguageModel> => {
  const baseURL = entry.base_url?.replace(/\/+$/, "");
  // Every provider request (and each redirect hop) passes the egress policy (storage/outbound.ts).
  const fetch = outboundFetch(env);
  switch (entry.provider) {
    case "openai-compatible": {
      const { createOpenAICompatible } = await providerPackages.openaiCompatible();
      // includeUsage asks the server for the final usage chunk when streaming; supportsStructuredOutputs
      // sends structured output (`Output.object`) as `response_format: json_schema` with the schema, not a
      // bare `json_object` (docs/learning.md, "Structured output").
      return createOpenAICompatible({
        name: "openai-compatible",
        baseURL: baseURL!,
        apiKey,
        includeUsage: true,
        supportsStructuredOutputs: true,
        fetch,
      }).chatModel(entry.id);
    }
    case "openai":
      return (await providerPackages.openai()).createOpenAI({ apiKey, baseURL, fetch }).responses(entry.id);
    case "anthropic":
      return (await providerPackages.anthropic()).createAnthropic({ apiKey, baseURL, fetch })(entry.id);
    case "google":
      return (await providerPackages.google()).createGoogleGenerativeAI({ apiKey, baseURL, fetch })(entry.id);
    case "workers-ai":
      return (await providerPackages.workersAi()).createWorkersAI({ binding: env.AI! })(entry.id);
  }
};
