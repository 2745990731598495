/**
 * Embedding recall for skill selection (docs/skills-and-plugins.md, "Skills in a run"): when the
 * workspace configures `embedding_model`, each skill's name + description + keywords is embedded once
 * per SKILL.md content hash and cached in D1 (`skill_embeddings`), and each run embeds its message.
 * Models come from the `ai` SDK provider packages (`embedMany`); tests supply their own factory.
 */
import type { EmbeddingModel } from "ai";
import { and, eq, inArray } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import type { ModelEntry } from "../../storage/config/schema.ts";
import { makeDb } from "../../storage/db/client.ts";
import { skillEmbeddings } from "../../storage/db/schema.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";
import { outboundFetch } from "../../storage/outbound.ts";
import { AppError } from "../../kernel/errors.ts";
import type { CatalogSkill } from "./selection.ts";
import { aiSdk, providerPackages, type TextEmbedder } from "../../runtime/index.ts";

/** Builds an `ai` SDK embedding model for a config entry (the provider packages in production). */
export type EmbeddingFactory = (
  entry: ModelEntry,
  build: { env: Env; apiKey: string | undefined },
) => EmbeddingModel | Promise<EmbeddingModel>;

/** The provider packages load on their kind's first model (runtime/agent/provider-packages.ts). */
export const providerEmbeddingModel: EmbeddingFactory = async (entry, { env, apiKey }) => {
  const baseURL = entry.base_url?.replace(/\/+$/, "");
  // Requests go through the egress policy like every tenant-chosen URL (README, "Egress policy").
  const fetch = outboundFetch(env);
  switch (entry.provider) {
    case "openai-compatible":
      if (!baseURL) throw new AppError("unprocessable", "embedding_model: provider 'openai-compatible' needs base_url");
      return (await providerPackages.openaiCompatible())
        .createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey, fetch })
        .embeddingModel(entry.id);
    case "openai":
      return (await providerPackages.openai()).createOpenAI({ apiKey, baseURL, fetch }).embeddingModel(entry.id);
    case "google":
      return (await providerPackages.google()).createGoogleGenerativeAI({ apiKey, baseURL, fetch }).embeddingModel(entry.id);
    case "workers-ai":
      if (!env.AI) throw new AppError("unprocessable", "embedding_model: provider 'workers-ai' needs the Worker's AI binding");
      return (await providerPackages.workersAi()).createWorkersAI({ binding: env.AI }).embedding(entry.id);
    case "anthropic":
      throw new AppError("unprocessable", "embedding_model: provider 'anthropic' has no embedding models");
  }
};

/**
 * The runtime's text embedder over the workspace's `embedding_model` (tool ranking; docs/agent-loop.md,
 * "Tool assembly"), registered at the composition root; null when no embedding model is configured.
 */
export function textEmbedder(factory: EmbeddingFactory = providerEmbeddingModel): TextEmbedder {
  return async ({ env, workspaceId, config, texts, signal }) => {
    const entry = config.embedding_model;
    if (!entry || texts.length === 0) return null;
    const apiKey = entry.api_key_secret ? await resolveSecret(env, workspaceId, entry.api_key_secret) : undefined;
    const { embedMany } = await aiSdk();
    const { embeddings } = await embedMany({
      model: await factory(entry, { env, apiKey }),
      values: [...texts],
      maxRetries: 1,
      ...(signal ? { abortSignal: signal } : {}),
    });
    return embeddings;
  };
}

/** The text a skill is embedded as: what lexical recall sees too. */
export const embeddingText = (s: CatalogSkill) => [s.name.replace(/-/g, " "), s.description, s.keywords.join(" ")].join("\n").trim();

/**
 * Cosine similarity of the message with every catalog skill. Missing skill vectors are embedded (in the
 * same call as the message) and cached; returns name → cosine.
 */
export async function embeddingCosines(
  env: Env,
  workspaceId: string,
  entry: ModelEntry,
  factory: EmbeddingFactory,
  catalog: readonly CatalogSkill[],
  message: string,
  cosine: (a: readonly number[], b: readonly number[]) => number,
  signal?: AbortSignal,
): Promise<Map<string, number>> {
  const modelKey = `${entry.provider}:${entry.id}`;
  const db = makeDb(env.DB);
  const hashes = [...new Set(catalog.map((s) => s.content_hash))];
  const cached = new Map<string, number[]>();
  // D1 caps bound parameters per statement; look hashes up in chunks.
  for (let i = 0; i < hashes.length; i += 90) {
    const rows = await db
      .select({ contentHash: skillEmbeddings.contentHash, vector: skillEmbeddings.vector })
      .from(skillEmbeddings)
      .where(
        and(
          eq(skillEmbeddings.workspaceId, workspaceId),
          eq(skillEmbeddings.model, modelKey),
          inArray(skillEmbeddings.contentHash, hashes.slice(i, i + 90)),
        ),
      )
      .all();
    for (const r of rows) cached.set(r.contentHash, JSON.parse(r.vector) as number[]);
  }
  const missing = catalog.filter(
    (s, i, all) => !cached.has(s.content_hash) && all.findIndex((o) => o.content_hash === s.content_hash) === i,
  );
  const apiKey = entry.api_key_secret ? await resolveSecret(env, workspaceId, entry.api_key_secret) : undefined;
  const model = await factory(entry, { env, apiKey });
  // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
  const { embedMany } = await aiSdk();
  const { embeddings } = await embedMany({
    model,
    values: [message, ...missing.map(embeddingText)],
    maxRetries: 1,
    ...(signal ? { abortSignal: signal } : {}),
  });
  const [query, ...fresh] = embeddings;
  if (!query) throw new AppError("provider_error", "embedding_model returned no vector for the message");
  const now = Date.now();
  const inserts = missing.map((s, i) => {
    const vector = fresh[i] ?? [];
    cached.set(s.content_hash, vector);
    return db
      .insert(skillEmbeddings)
      .values({ workspaceId, model: modelKey, contentHash: s.content_hash, vector: JSON.stringify(vector), createdAt: now })
      .onConflictDoNothing();
  });
  for (let i = 0; i < inserts.length; i += 50) {
    const chunk = inserts.slice(i, i + 50);
    if (chunk.length > 0) await db.batch(chunk as [(typeof chunk)[0], ...typeof chunk]);
  }
  return new Map(catalog.map((s) => [s.name, cosine(query, cached.get(s.content_hash) ?? [])]));
}
