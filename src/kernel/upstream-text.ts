/**
 * What an upstream server said, shortened for a run error or task history (README "Egress policy"):
 * a tenant-chosen host's error body must reach users only as a short, printable summary — never as
 * a whole HTML page or a probe's reflected response. Redact secrets *before* summarising, so a cut
 * cannot leave half a key behind.
 */

/** The most characters of upstream text a summary keeps. */
export const UPSTREAM_TEXT_MAX = 200;

/**
 * `text` without HTML (script/style contents and tags dropped), control characters or runs of
 * whitespace, cut to `max` characters with an ellipsis.
 */
export function summariseUpstreamText(text: string, max = UPSTREAM_TEXT_MAX): string {
  let out = text;
  if (/<[a-z!/?][^>]*>/i.test(out)) {
    out = out
      .replace(/<(script|style)\b[\s\S]*?(<\/\1\s*>|$)/gi, " ")
      .replace(/<!--[\s\S]*?(-->|$)/g, " ")
      .replace(/<[^>]*>?/g, " ");
  }
  // Control and format characters (C0, C1, bidi overrides, zero-width) would garble a log or UI.
  out = out
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
  if (out.length <= max) return out;
  return `${Array.from(out).slice(0, max).join("").trimEnd()}…`;
}

/** `HTTP <status>: <summary>`, just `HTTP <status>` when nothing printable is left, the summary alone without a status. */
export function upstreamSummary(status: number | undefined, text: string, max = UPSTREAM_TEXT_MAX): string {
  const summary = summariseUpstreamText(text, max);
  if (status === undefined) return summary;
  return summary ? `HTTP ${status}: ${summary}` : `HTTP ${status}`;
}
