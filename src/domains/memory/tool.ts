/**
 * The `memory` tool (docs/memory.md): the agent curates its own memory — `add` an entry, `replace` or
 * `remove` the one entry containing `old_text` — in the run's scope (its agent's, else the
 * workspace's). A write is durable at once and audited as made by the run, but the system prompt of
 * the current run keeps the snapshot taken when it opened; the change shows from the next run.
 * Refusals (unsafe text, duplicates, over budget, no or several matches) come back as tool errors the
 * model can act on. Registered for every tool set at the composition root.
 */
import { z } from "zod";
import { defineTool, fail, ok } from "../../runtime/index.ts";
import { AppError } from "../../kernel/errors.ts";
import { EntryTextSchema, MemoryStoreSchema, STORE_PURPOSE, entryLine, runScope, type MemoryActor } from "./memory.ts";
import { addEntry, removeEntry, replaceEntry, type WriteResult } from "./store.ts";

const MemoryInput = z.strictObject({
  action: z.enum(["add", "replace", "remove"]).describe("add a new entry; replace or remove the one entry containing old_text"),
  store: MemoryStoreSchema.describe(`notes: ${STORE_PURPOSE.notes}; profile: ${STORE_PURPOSE.profile}`),
  text: EntryTextSchema.optional().describe("The entry's new text (add, replace): one short, self-contained fact"),
  old_text: EntryTextSchema.optional().describe("A substring that identifies exactly one existing entry (replace, remove)"),
});

type MemoryArgs = z.infer<typeof MemoryInput>;

export const memoryTool = defineTool<MemoryArgs>({
  name: "memory",
  outward: true,
  description:
    "Curate what you remember across runs. Two stores, each with a character budget: notes (about the work) and profile (of the user and team). " +
    "Save durable, reusable facts — not task progress or anything secret. Changes are saved at once but appear in your system prompt's Memory section from the next run on. " +
    "When a store is full, replace or remove entries to make room.",
  input: MemoryInput,
  always: true,
  async execute(args, ctx) {
    const scope = runScope(ctx.workspaceId, ctx.data);
    const actor: MemoryActor = { kind: "run", id: ctx.runId, sessionId: ctx.sessionId };
    try {
      let result: WriteResult;
      let done: string;
      if (args.action === "add") {
        if (args.text === undefined) return fail("validation_failed", "add needs text");
        result = await addEntry(ctx.env, scope, args.store, args.text, actor);
        done = `Added to ${args.store}`;
      } else if (args.action === "replace") {
        if (args.old_text === undefined || args.text === undefined) return fail("validation_failed", "replace needs old_text and text");
        result = await replaceEntry(ctx.env, scope, args.store, args.old_text, args.text, actor);
        done = `Replaced in ${args.store}`;
      } else {
        if (args.old_text === undefined) return fail("validation_failed", "remove needs old_text");
        result = await removeEntry(ctx.env, scope, args.store, args.old_text, actor);
        done = `Removed from ${args.store}`;
      }
      const lines = [
        `${done}: ${result.entry ? JSON.stringify(result.entry.text) : ""}`,
        `${args.store}: ${result.view.usage} (${result.view.used_chars}/${result.view.budget_chars}).`,
        "Saved now; your system prompt shows it from the next run. Entries:",
        ...(result.view.entries.length > 0 ? result.view.entries.map((e) => entryLine(e.text)) : ["(empty)"]),
      ];
      return ok(lines.join("\n"));
    } catch (err) {
      if (err instanceof AppError) return fail(err.code, err.message);
      throw err;
    }
  },
});
