/**
 * Stands in for `@ai-sdk/gateway` in the deployed bundle (wrangler.toml `[alias]`, docs/performance.md
 * "The bundle"). The `ai` SDK imports Vercel's AI Gateway provider statically as its default provider,
 * used only when a model is named by a string id (`streamText({ model: "openai/gpt-5" })`) and for
 * recognising the gateway's own errors. Beaver always passes a model object built by its providers
 * (runtime/agent/providers.ts: openai, anthropic, google, openai-compatible, workers-ai) and offers no
 * gateway model kind, so the gateway's 78 KB were bundled and never run. A string model id reaching the
 * SDK is a bug in our wiring, and says so. If the SDK starts importing another name from the package,
 * the build fails on the missing export rather than shipping something half-wired.
 */
const absent = (): never => {
  throw new Error("the AI Gateway provider is not bundled: pass a model object from runtime/agent/providers.ts, not a string id");
};

/** The gateway's errors: none can occur without the gateway, so nothing is one of them. */
export class GatewayError extends Error {
  static isInstance(_error: unknown): boolean {
    return false;
  }
}
export class GatewayAuthenticationError extends GatewayError {}

/** The default provider for string model ids, as a provider whose every model throws. */
export const gateway = {
  specificationVersion: "v4" as const,
  languageModel: absent,
  embeddingModel: absent,
  imageModel: absent,
};
export const createGateway = absent;
