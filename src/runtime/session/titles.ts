/**
 * Session titles (docs/sessions.md, "Titles"). A session created without a title is named from its
 * first message when that message is submitted (`titleFromMessage`, no model call), so the list never
 * shows an empty title; after its first completed run, the auxiliary model names it from the first
 * request and answer, and the new title is stored with a `session_info` event and replicated to the
 * session list. Without an auxiliary model the derived title stays. A failing title call only logs:
 * it never fails the run.
 */
import type { SessionLog } from "./session-log.ts";
import type { ModelHandle } from "../agent/providers.ts";
import { redactSecrets } from "../agent/providers.ts";
import { TITLE_SYSTEM, titlePrompt } from "../agent/summary-prompts.ts";
import { excerpt } from "./message-text.ts";
import { errorFields, log as logger } from "../../kernel/log.ts";
import { aiSdk } from "../agent/ai-sdk-loader.ts";

export const MAX_TITLE_CHARS = 60;
/** DO meta key: the title was derived from the first message and the auxiliary model has not named the session yet. */
export const TITLE_PENDING = "title_pending";
/** How much of the first request and answer the title call reads. */
const REQUEST_CHARS = 2_000;
const ANSWER_CHARS = 1_000;

/** A title from a message without a model call: its first non-empty line, whitespace collapsed, cut to 60 characters. */
export function titleFromMessage(content: string): string {
  const line = content.split("\n").find((l) => l.trim().length > 0) ?? content;
  return excerpt(line, MAX_TITLE_CHARS);
}

/** A model's answer as a title: first line, without quotes, Markdown markers or a trailing period; null when nothing is left. */
export function cleanTitle(raw: string): string | null {
  const line = raw.split("\n").find((l) => l.trim().length > 0) ?? "";
  const cleaned = line
    .replace(/^\s*(#+|title:)\s*/i, "")
    .replace(/^["'“”‘’*`_\s]+|["'“”‘’*`_\s]+$/g, "")
    .replace(/\.$/, "")
    .trim();
  return cleaned.length === 0 ? null : excerpt(cleaned, MAX_TITLE_CHARS);
}

/** Asks `handle` for a title; throws what the provider threw. */
export async function generateTitle(handle: ModelHandle, request: string, answer: string, signal?: AbortSignal): Promise<string | null> {
  // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
  const { generateText } = await aiSdk();
  const { text } = await generateText({
    model: handle.model,
    system: TITLE_SYSTEM,
    prompt: titlePrompt(request.slice(0, REQUEST_CHARS), answer.slice(0, ANSWER_CHARS)),
    maxRetries: 1,
    maxOutputTokens: 40,
    ...(signal ? { abortSignal: signal } : {}),
  });
  return cleanTitle(text);
}

/**
 * After a completed run: when the session's title is still the one derived from its first message,
 * the auxiliary model names it. Never throws.
 */
export async function settleTitle(args: {
  log: SessionLog;
  auxiliary: ModelHandle | null;
  runId: string;
  request: string;
  answer: string;
  signal?: AbortSignal;
}): Promise<void> {
  const { log } = args;
  try {
    if (log.store.getMeta<boolean>(TITLE_PENDING) !== true) return;
    if (args.auxiliary === null) {
      log.store.setMeta(TITLE_PENDING, false);
      return;
    }
    let title: string | null = null;
    try {
      title = await generateTitle(args.auxiliary, args.request, args.answer, args.signal);
    } catch (err) {
      const reason = redactSecrets(args.auxiliary, err instanceof Error ? err.message : String(err));
      logger.warn("session title: the auxiliary model failed; the title derived from the first message stays", {
        session_id: log.session.id,
        ...errorFields(err),
        error: reason,
      });
    }
    // The title may have been set meanwhile by someone else (the flag is cleared then).
    if (log.store.getMeta<boolean>(TITLE_PENDING) !== true) return;
    if (title === null || title === log.session.title) {
      log.store.setMeta(TITLE_PENDING, false);
      return;
    }
    const named = title;
    log.appendOne({ type: "session_info", run_id: args.runId, client_id: "title", changes: { title: named } }, () => {
      log.updateSession({ title: named });
      log.store.setMeta(TITLE_PENDING, false);
    });
  } catch (err) {
    logger.warn("session title: could not be stored", { session_id: log.session.id, ...errorFields(err) });
  }
}
