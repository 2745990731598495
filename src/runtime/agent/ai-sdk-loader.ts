/**
 * Loads the `ai` SDK's names (ai-sdk.ts) on first use, once per isolate (docs/performance.md,
 * "Startup, third pass"): the runtime's model steps, titles and compaction, and through the runtime's
 * entry the domains' structured output, embeddings and skill choice and the edge's UI chat face.
 */
import type * as AiSdk from "./ai-sdk.ts";

let loading: Promise<typeof AiSdk> | undefined;

export function aiSdk(): Promise<typeof AiSdk> {
  return (loading ??= import("./ai-sdk.ts"));
}
