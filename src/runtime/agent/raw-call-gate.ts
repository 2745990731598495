/**
 * Holds back streamed text that may turn out to be a tool call written as text (raw-tool-calls.ts),
 * so live clients never see `{"name":"echo",…}` flash up as an answer. Text that clearly is prose
 * streams through unchanged; held text is released at the end of the step if it was not a call.
 */

/** Openings of text that `extractRawToolCalls` may convert. */
const CALL_OPENINGS = ["{", "[", "```", "<tool_call>", "<|python_tag|>"];
const TAG = "<tool_call>";

type Mode = "undecided" | "passthrough" | "holding";

export class RawCallDeltaGate {
  private held = "";
  private mode: Mode = "undecided";

  /** Feed one delta; returns the text that may be shown now (possibly empty). */
  push(delta: string): string {
    this.held += delta;
    if (this.mode === "holding") return "";
    if (this.mode === "undecided") {
      const start = this.held.trimStart();
      if (start === "") return "";
      if (CALL_OPENINGS.some((o) => start.startsWith(o))) {
        this.mode = "holding";
        return "";
      }
      // A partial opening such as "`" or "<tool" may still become one: wait for more text.
      if (CALL_OPENINGS.some((o) => o.startsWith(start))) return "";
      this.mode = "passthrough";
    }
    return this.releasePassthrough();
  }

  /** End of the step: whatever is still held. */
  flush(): string {
    const rest = this.held;
    this.held = "";
    return rest;
  }

  /** In prose, a `<tool_call>` tag may still start later: keep it (and any partial tag) back. */
  private releasePassthrough(): string {
    const tagAt = this.held.indexOf(TAG);
    if (tagAt >= 0) {
      const out = this.held.slice(0, tagAt);
      this.held = this.held.slice(tagAt);
      this.mode = "holding";
      return out;
    }
    let keep = 0;
    for (let n = Math.min(TAG.length - 1, this.held.length); n > 0; n--) {
      if (TAG.startsWith(this.held.slice(-n))) {
        keep = n;
        break;
      }
    }
    const out = this.held.slice(0, this.held.length - keep);
    this.held = this.held.slice(this.held.length - keep);
    return out;
  }
}
