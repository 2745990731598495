/**
 * The text an OpenAI client is streamed from a run's frames (docs/openai-api.md, "Streaming"): the
 * text of every assistant message of the run, in order, separated by a blank line — a run with tool
 * calls may say something before them and answer after them. Deltas are passed on as they come; when
 * a stored assistant message holds text its deltas did not carry, the rest is sent then, so what was
 * streamed always adds up to what the session stored. Pure: frames in, text pieces out.
 */
import type { StreamFrame } from "../../../runtime/index.ts";

export class RunText {
  readonly #streamed = new Map<string, string>();
  #wroteAny = false;
  #text = "";

  /** All text streamed so far. */
  get text(): string {
    return this.#text;
  }

  /** The text pieces this frame adds (often none). */
  push(frame: StreamFrame): string[] {
    if (!frame.persistent && frame.type === "text_delta") return this.#add(frame.event_id, frame.delta);
    if (frame.persistent && frame.type === "message" && frame.message.role === "assistant") {
      const stored = frame.message.text;
      const sent = this.#streamed.get(frame.id) ?? "";
      if (stored.length > sent.length && stored.startsWith(sent)) return this.#add(frame.id, stored.slice(sent.length));
    }
    return [];
  }

  #add(eventId: string, delta: string): string[] {
    if (delta === "") return [];
    const before = this.#streamed.get(eventId);
    // The first text of a later message is set off from the text before it.
    const piece = before === undefined && this.#wroteAny ? `\n\n${delta}` : delta;
    this.#streamed.set(eventId, (before ?? "") + delta);
    this.#wroteAny = true;
    this.#text += piece;
    return [piece];
  }
}
