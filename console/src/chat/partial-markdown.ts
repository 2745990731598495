/**
 * Streaming-safe Markdown (docs/console.md, "Markdown"): while an answer streams, its last paragraph
 * may have opened `**`, `*` or a backtick that the next chunk closes. Rendered as is, the text would
 * flash raw markers and then jump to bold; closing them now renders the partial text as it will look
 * once complete. An open code fence needs nothing: marked renders it as code to the end. Pure, so it is
 * unit-tested (test/console/partial-markdown.pure.test.ts).
 */
export function closeOpenMarkup(text: string): string {
  const fences = text.match(/^ {0,3}(```|~~~)/gm)?.length ?? 0;
  if (fences % 2 === 1) return text;
  const lastPara = text.slice(text.lastIndexOf("\n\n") + 1);
  const plain = lastPara.replace(/`[^`\n]*`/g, "");
  if ((plain.match(/`/g)?.length ?? 0) % 2 === 1) return text + "`";
  const bold = (plain.match(/\*\*/g)?.length ?? 0) % 2 === 1;
  // List bullets ("* item") are not emphasis.
  const singles = plain.replace(/\*\*/g, "").replace(/^\s*\*\s/gm, "");
  const italic = (singles.match(/\*/g)?.length ?? 0) % 2 === 1;
  if (!bold && !italic) return text;
  // An opener with nothing after it yet ("Some **"): hide it until its text arrives.
  if (/\*+$/.test(text)) return text.replace(/\*+$/, "");
  return text + (italic ? "*" : "") + (bold ? "**" : "");
}
