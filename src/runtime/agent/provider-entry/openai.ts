/**
 * The one name Beaver uses from `@ai-sdk/openai`, imported dynamically by ../provider-packages.ts: a dynamic
 * import of the package itself would keep every export of it in the bundle (docs/performance.md, "The bundle").
 */
export { createOpenAI } from "@ai-sdk/openai";
