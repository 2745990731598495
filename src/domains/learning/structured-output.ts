/**
 * Asking a model for one structured object (docs/learning.md, "Structured output"): `generateText` +
 * `Output.object`, whose JSON schema reaches an OpenAI-compatible server as `response_format:
 * json_schema` (src/runtime/agent/providers.ts). Shared by the merge's hunk resolver and the skill
 * author. One transport retry only: each caller retries once itself on an invalid answer, with the
 * reason. A provider error is rethrown with the workspace's key redacted, because the message ends up
 * in a draft's `failure`.
 */
import type { z } from "zod";
import { aiSdk, redactSecrets, type ModelHandle } from "../../runtime/index.ts";

export interface ObjectRequest<T> {
  schema: z.ZodType<T>;
  /** The schema's name and description as the provider sees them (`response_format.json_schema.name`). */
  name: string;
  description: string;
  system: string;
  prompt: string;
}

export async function askForObject<T>(handle: ModelHandle, request: ObjectRequest<T>, signal?: AbortSignal): Promise<T> {
  try {
    // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
    const { generateText, Output } = await aiSdk();
    const { output } = await generateText({
      model: handle.model,
      output: Output.object({ schema: request.schema, name: request.name, description: request.description }),
      system: request.system,
      prompt: request.prompt,
      maxRetries: 1,
      ...(handle.maxTokens ? { maxOutputTokens: handle.maxTokens } : {}),
      ...(signal ? { abortSignal: signal } : {}),
    });
    return output as T;
  } catch (e) {
    throw new Error(redactSecrets(handle, e instanceof Error ? e.message : String(e)), { cause: e });
  }
}
