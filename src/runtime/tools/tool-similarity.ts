/**
 * Embedding similarity of a run's candidate tools to its user message (docs/agent-loop.md, "Tool
 * assembly"; seed tools-blueprint: embedding top-k for the tools not always offered or hinted). Tool
 * descriptions rarely change, so their vectors are kept per isolate, keyed by workspace, embedding model
 * and the exact text embedded; a run embeds its message and only the descriptions not seen before, in
 * one call. Any failure answers null and the assembly ranks by keywords instead: ranking never fails a run.
 */
import type { TextEmbedder } from "../services.ts";
import type { Env } from "../../storage/env.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { cosine } from "../../kernel/vectors.ts";
import { setBounded } from "../../kernel/memo.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { toolEmbeddingText } from "./assemble.ts";

/** Tool-description vectors kept per isolate (newest last; the oldest go beyond this many). */
export const MAX_CACHED_TOOL_VECTORS = 2_000;
const vectors = new Map<string, number[]>();

const cacheKey = (workspaceId: string, model: string, text: string) => `${workspaceId}\n${model}\n${text}`;

/** Name → cosine similarity to `query`, or null without an embedding model (or when embedding failed). */
export async function toolSimilarity(
  embed: TextEmbedder | undefined,
  req: { env: Env; workspaceId: string; config: WorkspaceConfig; signal?: AbortSignal },
  tools: readonly { name: string; description: string }[],
  query: string,
): Promise<Map<string, number> | null> {
  const entry = req.config.embedding_model;
  if (!embed || !entry || tools.length === 0 || query.trim() === "") return null;
  const model = `${entry.provider}:${entry.id}`;
  const texts = tools.map(toolEmbeddingText);
  const missing = [...new Set(texts.filter((t) => !vectors.has(cacheKey(req.workspaceId, model, t))))];
  try {
    const answer = await embed({ ...req, texts: [query, ...missing] });
    if (!answer) return null;
    const [q, ...fresh] = answer;
    if (!q) return null;
    missing.forEach((t, i) => {
      const v = fresh[i];
      if (v) setBounded(vectors, cacheKey(req.workspaceId, model, t), v, MAX_CACHED_TOOL_VECTORS);
    });
    return new Map(tools.map((t, i) => [t.name, cosine(q, vectors.get(cacheKey(req.workspaceId, model, texts[i]!)) ?? [])]));
  } catch (err) {
    if (req.signal?.aborted) throw err;
    log.warn("tool embedding failed; tools are ranked by keywords", errorFields(err));
    return null;
  }
}
