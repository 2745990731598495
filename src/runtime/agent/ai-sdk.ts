/**
 * The names Beaver uses from the `ai` SDK, imported on first use through `aiSdk()` (ai-sdk-loader.ts)
 * so the SDK is not evaluated at the Worker's startup (docs/performance.md, "Startup, third pass").
 * A dynamic `import("ai")` would keep every export of the package in the bundle (the bundler cannot
 * tell which a namespace's reader uses); this module names them, so the rest is still shaken out.
 */
export {
  APICallError,
  Output,
  RetryError,
  createUIMessageStreamResponse,
  embedMany,
  generateText,
  jsonSchema,
  streamText,
  zodSchema,
} from "ai";
