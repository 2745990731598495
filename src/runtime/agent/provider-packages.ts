/**
 * The `ai` SDK provider packages, each loaded on the first model of its kind an isolate builds rather
 * than evaluated at every isolate's startup: a workspace uses one or two kinds, and evaluating all five
 * (with what they alone use of provider-utils) was about 18 ms of every cold isolate's startup CPU
 * (docs/performance.md, "The bundle, second pass"). Chat models (providers.ts) and embedding
 * models (domains/skills/embeddings.ts) load them through here, each through a module naming the one
 * function used (provider-entry/). The bundle still holds every package.
 */
/** `load`, run once per isolate: its promise is kept and shared. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

export const providerPackages = {
  openaiCompatible: once(() => import("./provider-entry/openai-compatible.ts")),
  openai: once(() => import("./provider-entry/openai.ts")),
  anthropic: once(() => import("./provider-entry/anthropic.ts")),
  google: once(() => import("./provider-entry/google.ts")),
  workersAi: once(() => import("./provider-entry/workers-ai.ts")),
};
