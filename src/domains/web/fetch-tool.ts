/**
 * `web_fetch` (docs/schedules.md sits beside it; README "Egress policy"): GET one URL for the model.
 * The request goes through `outboundFetchLocated` (storage/outbound.ts), so the URL and every redirect
 * hop pass the egress policy — loopback and private networks only with `BEAVER_ALLOW_PRIVATE_EGRESS`.
 * At most `WEB_FETCH_READ_BYTES` are read and `WEB_FETCH_TIMEOUT_MS` spent (the read included); HTML
 * becomes Markdown (node-html-markdown, scripts, styles and other non-content elements dropped),
 * text is passed through, anything else is described, and the model gets at most
 * `WEB_FETCH_RETURN_BYTES`. The answer starts with the status, content type and final URL. An error
 * answer (status 400 or more) is not passed on: the model gets its status, content type and a
 * bounded excerpt (markup removed, `WEB_FETCH_ERROR_EXCERPT_CHARS`), as other upstream errors reach
 * runs (kernel/upstream-text.ts). Secret-shaped values are redacted from every result
 * (kernel/prompt-guard.ts; the tool executor redacts again).
 */
import { z } from "zod";
import type { NodeHtmlMarkdown } from "node-html-markdown";
import { AppError } from "../../kernel/errors.ts";
import { redactSecrets } from "../../kernel/prompt-guard.ts";
import { summariseUpstreamText } from "../../kernel/upstream-text.ts";
import { outboundFetchLocated } from "../../storage/outbound.ts";
import { readHead } from "../../storage/outbound-body.ts";
import { defineTool, fail, ok, type ToolSpec } from "../../runtime/index.ts";

export const WEB_FETCH_READ_BYTES = 2 * 1024 * 1024;
export const WEB_FETCH_RETURN_BYTES = 64 * 1024;
export const WEB_FETCH_TIMEOUT_MS = 15_000;
/** Characters of an error answer's text the model sees (after markup is removed and secrets redacted). */
export const WEB_FETCH_ERROR_EXCERPT_CHARS = 300;

/** Elements whose content is never page text. */
const IGNORED = ["script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas", "head"];

/** The converter and its HTML parser load on the first HTML page, not at Worker startup (docs/performance.md, "The bundle"). */
let markdown: Promise<NodeHtmlMarkdown> | null = null;

export async function htmlToMarkdown(html: string): Promise<string> {
  markdown ??= import("node-html-markdown").then(
    ({ NodeHtmlMarkdown }) => new NodeHtmlMarkdown({ ignore: IGNORED, maxConsecutiveNewlines: 2 }),
  );
  return (await markdown).translate(html).trim();
}

const TEXTUAL =
  /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml|x-ndjson|yaml|x-yaml|toml))|\+json$|\+xml$/;

function decode(bytes: Uint8Array, contentType: string): string {
  const charset = /charset="?([^";\s]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/** At most `max` UTF-8 bytes of `text`, cut on a character boundary. */
function capText(text: string, max: number): { text: string; truncated: boolean } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= max) return { text, truncated: false };
  return { text: new TextDecoder().decode(bytes.subarray(0, max)).replace(/\uFFFD$/, ""), truncated: true };
}

const Input = z.strictObject({
  url: z.string().min(1).max(2048).describe("The http(s) URL to GET"),
});

export const webFetchTool: ToolSpec<unknown> = defineTool({
  name: "web_fetch",
  outward: true,
  description:
    "Fetch a web page or file by URL (HTTP GET) and read it: HTML comes back as Markdown, text as it is, binary content is described. " +
    "Reports the status, content type and final URL after redirects. Long pages are cut.",
  input: Input,
  idempotent: true,
  readOnly: true,
  async execute({ url }, ctx) {
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(WEB_FETCH_TIMEOUT_MS)]);
    try {
      const { response, url: finalUrl } = await outboundFetchLocated(ctx.env)(url, {
        method: "GET",
        headers: { Accept: "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5", "User-Agent": "Beaver-web_fetch/1" },
        signal,
      });
      const contentType = response.headers.get("Content-Type") ?? "";
      const mime = contentType.split(";")[0]!.trim().toLowerCase();
      const { bytes, truncated: readCut } = await readHead(response.body, WEB_FETCH_READ_BYTES);
      let body: string;
      let kind: string;
      /** The page's text as sent (markup included): what an error's excerpt is made from. */
      let raw = "";
      if (mime === "text/html" || mime === "application/xhtml+xml") {
        raw = decode(bytes, contentType);
        body = await htmlToMarkdown(raw);
        kind = "html converted to markdown";
      } else if (mime === "" || TEXTUAL.test(mime)) {
        body = raw = decode(bytes, contentType);
        kind = "text";
      } else {
        body = `[binary content: ${mime}, ${bytes.byteLength}${readCut ? "+" : ""} bytes; not shown]`;
        kind = "binary";
      }
      const status = `status: ${response.status}${response.statusText ? ` ${summariseUpstreamText(response.statusText, 60)}` : ""}`;
      if (response.status >= 400) {
        const excerpt = kind === "binary" ? body : summariseUpstreamText(redactSecrets(raw), WEB_FETCH_ERROR_EXCERPT_CHARS);
        const text = [
          status,
          `content_type: ${contentType || "(none)"}`,
          `final_url: ${finalUrl.href}`,
          `excerpt: ${excerpt || "(none)"}`,
        ].join("\n");
        return { ...fail("http_error", `${finalUrl.href} answered ${response.status}`), content: text };
      }
      const capped = capText(redactSecrets(body), WEB_FETCH_RETURN_BYTES);
      const header = [
        status,
        `content_type: ${contentType || "(none)"}`,
        `final_url: ${finalUrl.href}`,
        `content: ${kind}${readCut || capped.truncated ? ` (truncated: read at most ${WEB_FETCH_READ_BYTES} bytes, returned at most ${WEB_FETCH_RETURN_BYTES})` : ""}`,
      ].join("\n");
      return ok(`${header}\n\n${capped.text}`);
    } catch (e) {
      if (e instanceof AppError) return fail(e.code, e.message);
      if (signal.aborted && !ctx.signal.aborted)
        return fail("timeout", `No complete answer from ${url} within ${WEB_FETCH_TIMEOUT_MS / 1000} s`);
      if (ctx.signal.aborted) throw e;
      return fail("fetch_failed", e instanceof Error ? e.message : String(e));
    }
  },
});
