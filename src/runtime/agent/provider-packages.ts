/**
 * The `ai` SDK provider packages, each loaded on the first model of its kind an isolate builds rather
 * than evaluated at every isolate's startup: a workspace uses one or two kinds, and evaluating all five
 * (their settings and response schemas, built with zod at module scope) was about a fifth of the
 * Worker's startup CPU (docs/performance.md, "The bundle"). Chat models (providers.ts) and embedding
 * models (domains/skills/embeddings.ts) load them through here, each through a module naming the one
 * function used (provider-entry/). The bundle still holds every package.
 */
let openaiCompatible: Promise<typeof import("./provider-entry/openai-compatible.ts")> | undefined;
let openai: Promise<typeof import("./provider-entry/openai.ts")> | undefined;
let anthropic: Promise<typeof import("./provider-entry/anthropic.ts")> | undefined;
let google: Promise<typeof import("./provider-entry/google.ts")> | undefined;
let workersAi: Promise<typeof import("./provider-entry/workers-ai.ts")> | undefined;

export const providerPackages = {
  openaiCompatible: () => (openaiCompatible ??= import("./provider-entry/openai-compatible.ts")),
  openai: () => (openai ??= import("./provider-entry/openai.ts")),
  anthropic: () => (anthropic ??= import("./provider-entry/anthropic.ts")),
  google: () => (google ??= import("./provider-entry/google.ts")),
  workersAi: () => (workersAi ??= import("./provider-entry/workers-ai.ts")),
};
