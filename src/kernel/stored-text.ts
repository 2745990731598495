/**
 * What text Beaver stores (README "Security", Input): no NUL, no other C0 control character except
 * tab, line feed and carriage return (CRLF line ends), no DEL, and no lone UTF-16 surrogate — they
 * break SQLite and D1 text, logs, terminals and the JSON other clients parse, and never carry meaning
 * in a title, a message or a config value. One rule, applied centrally to every JSON body
 * (edge/http/json-body.ts) and, as the `storedText` zod refinement, to text that arrives another way.
 */
import { z } from "zod";

const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `text` cannot be stored, or null when it can. */
export function unstorableText(text: string): string | null {
  const control = CONTROL.exec(text);
  if (control) {
    const code = control[0].charCodeAt(0);
    return `contains the control character U+${code.toString(16).toUpperCase().padStart(4, "0")}${code === 0 ? " (NUL)" : ""}`;
  }
  const surrogate = LONE_SURROGATE.exec(text);
  if (surrogate) return `contains a lone surrogate U+${surrogate[0].charCodeAt(0).toString(16).toUpperCase()} (not valid Unicode)`;
  return null;
}

/** A zod string that refuses unstorable text, naming the field through zod's issue path. */
export const storedText = () =>
  z.string().superRefine((text, ctx) => {
    const problem = unstorableText(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Dotted paths (as in validation errors) and problems of every unstorable string — key or value — in a parsed JSON value; iterative. */
export function unstorableTextPaths(root: unknown): { path: string; message: string }[] {
  const found: { path: string; message: string }[] = [];
  const stack: { value: unknown; path: string[] }[] = [{ value: root, path: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path } = item;
    if (typeof value === "string") {
      const problem = unstorableText(value);
      if (problem) found.push({ path: path.join(".") || "(body)", message: problem });
    } else if (Array.isArray(value)) {
      value.forEach((v: unknown, i) => stack.push({ value: v, path: [...path, String(i)] }));
    } else if (value !== null && typeof value === "object") {
      for (const [key, v] of Object.entries(value)) {
        const problem = unstorableText(key);
        if (problem) found.push({ path: [...path, JSON.stringify(key)].join("."), message: `key ${problem}` });
        else stack.push({ value: v, path: [...path, key] });
      }
    }
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
