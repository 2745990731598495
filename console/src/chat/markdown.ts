/**
 * Assistant Markdown → sanitised HTML (docs/console.md, "Markdown"). `marked` parses (GFM, a line break
 * per newline as chat UIs do), `highlight.js` core with a handful of languages colours fenced code, and
 * DOMPurify sanitises what comes out, so model output can never run script in the console. Raw HTML
 * in the Markdown is shown as text, images become links (no request to another host), and every code
 * block gets a copy button (handled by the caller through event delegation: no inline script).
 *
 * Streaming: `closeOpenMarkup` (partial-markdown.ts) closes what the model has opened but not yet closed.
 */
import { Marked, type Tokens } from "marked";
import DOMPurify from "dompurify";
import "highlight.js/styles/github.css";
import { closeOpenMarkup } from "./partial-markdown";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

for (const [name, lang] of Object.entries({ bash, css, diff, javascript, json, python, sql, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const language = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
      const known = language !== "" && hljs.getLanguage(language) !== undefined;
      const body = known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
      const cls = known ? ` class="hljs language-${escapeHtml(language)}"` : "";
      return (
        `<div class="code-block"><div class="code-head"><span>${escapeHtml(language || "text")}</span>` +
        `<button type="button" class="small copy" data-copy="code">Copy</button></div>` +
        `<pre tabindex="0"><code${cls}>${body}</code></pre></div>`
      );
    },
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    image({ href, text }: Tokens.Image): string {
      return `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`;
    },
  },
});

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** Sanitised HTML for `text` (Markdown); `streaming` closes markup the model has not closed yet. */
export function renderMarkdown(text: string, streaming = false): string {
  const source = streaming ? closeOpenMarkup(text) : text;
  const html = marked.parse(source, { async: false });
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ["img", "style", "form", "input", "textarea", "select", "iframe", "svg", "math"],
    FORBID_ATTR: ["style"],
  });
}

/** Click handler for a rendered block: a code block's Copy button copies its code. */
export function onMarkdownClick(e: MouseEvent): void {
  const button = (e.target as HTMLElement | null)?.closest<HTMLButtonElement>("button[data-copy]");
  const code = button?.closest(".code-block")?.querySelector("code");
  if (!button || !code) return;
  void navigator.clipboard?.writeText(code.textContent ?? "").then(
    () => {
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    },
    () => (button.textContent = "Copy failed"),
  );
}
