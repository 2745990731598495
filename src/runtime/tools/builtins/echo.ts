/** `echo`: returns its text unchanged — the smallest real tool, used to exercise the tool loop end to end. */
import { z } from "zod";
import { defineTool, ok } from "../spec.ts";

export const echoTool = defineTool({
  name: "echo",
  description: "Echo the given text back unchanged. Useful for testing that tool calls work.",
  input: z.strictObject({ text: z.string().max(100_000).describe("The text to echo back") }),
  idempotent: true,
  readOnly: true,
  async execute({ text }) {
    return ok(text);
  },
});
