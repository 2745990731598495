/**
 * Detects tool calls a model wrote as text instead of as structured calls
 * (docs/agent-loop.md, "Tool calls written as text"), e.g. `{"name":"echo","arguments":{…}}`,
 * `{"tool":…,"args":…}`, OpenAI-style
 * `{"function":{…}}`, fenced ```json blocks, `<tool_call>{…}</tool_call>` tags or arrays of these.
 *
 * To leave ordinary prose that merely contains JSON alone, untagged JSON is converted only when it is
 * the whole text (whitespace and code fences aside), every object has only call-shaped keys, and
 * every named tool exists. `<tool_call>` tags are an explicit statement of intent, so prose around
 * them is allowed and returned as `remaining_text`.
 */
import type { ToolCall } from "../session/events.ts";

export interface RawToolCallExtraction {
  tool_calls: ToolCall[];
  remaining_text: string;
}

const NAME_KEYS = ["name", "tool", "tool_name"] as const;
const ARG_KEYS = ["arguments", "args", "parameters", "input", "tool_input"] as const;
const CALL_KEYS = new Set<string>([...NAME_KEYS, ...ARG_KEYS, "id", "type"]);
const FUNCTION_WRAPPER_KEYS = new Set(["function", "id", "type"]);

const TAGGED = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/**
 * Pure: the same text, tool names and `idSeed` always give the same calls and ids. Callers pass a
 * per-step `idSeed` so identical raw calls in different steps still get distinct ids.
 */
export function extractRawToolCalls(text: string, knownToolNames: Iterable<string>, idSeed = ""): RawToolCallExtraction | null {
  const known = new Set(knownToolNames);
  if (known.size === 0 || text.trim() === "") return null;

  let values: unknown[] | null;
  let remaining = "";
  if (text.includes("<tool_call>")) {
    values = [];
    for (const match of text.matchAll(TAGGED)) {
      const inner = parseSegments(match[1] ?? "");
      if (!inner) return null;
      values.push(...inner);
    }
    remaining = text
      .replace(TAGGED, "")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  } else {
    values = parseSegments(text.replace(/^\s*<\|python_tag\|>/, ""));
  }
  if (!values || values.length === 0) return null;

  const calls: { name: string; args: unknown }[] = [];
  for (const value of values.flatMap(flattenCallList)) {
    const call = toCall(value, known);
    if (!call) return null;
    calls.push(call);
  }
  if (calls.length === 0) return null;

  const base = fnv1a(`${idSeed}\n${text}`);
  return {
    tool_calls: calls.map((c, i) => ({ id: `call_raw_${base}_${i}`, name: c.name, args: c.args })),
    remaining_text: remaining,
  };
}

/** Whitespace-separated fenced blocks and bare JSON values that must make up the whole text. */
function parseSegments(text: string): unknown[] | null {
  const out: unknown[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) return out;
    if (text.startsWith("```", i)) {
      const open = text.indexOf("\n", i);
      const close = open === -1 ? -1 : text.indexOf("```", open);
      if (close === -1) return null;
      // The fence's info string may name a language (json, tool_call…), never more than one word.
      if (!/^\x60{3}[\w-]*\s*$/.test(text.slice(i, open))) return null;
      const inner = parseSegments(text.slice(open + 1, close));
      if (!inner) return null;
      out.push(...inner);
      i = close + 3;
    } else if (text[i] === "{" || text[i] === "[") {
      // Fast path: the rest is one JSON value (the usual case); otherwise find where this one ends.
      const whole = tryParse(text.slice(i));
      if (whole.ok) {
        out.push(whole.value);
        return out;
      }
      const end = jsonValueEnd(text, i);
      if (end === -1) return null;
      try {
        out.push(JSON.parse(text.slice(i, end)));
      } catch {
        return null;
      }
      i = end;
    } else {
      return null;
    }
  }
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Index just past the balanced object/array starting at `start` (string-aware), or -1. */
function jsonValueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth++;
    else if (ch === "}" || ch === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** Arrays and `{"tool_calls":[…]}` wrappers hold several calls. */
function flattenCallList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(flattenCallList);
  if (isPlainObject(value) && Object.keys(value).length === 1 && Array.isArray(value.tool_calls)) {
    return value.tool_calls.flatMap(flattenCallList);
  }
  return [value];
}

function toCall(value: unknown, known: Set<string>): { name: string; args: unknown } | null {
  if (!isPlainObject(value)) return null;
  let body: Record<string, unknown> = value;
  if (isPlainObject(value.function)) {
    if (!Object.keys(value).every((k) => FUNCTION_WRAPPER_KEYS.has(k))) return null;
    body = value.function;
  }
  if (!Object.keys(body).every((k) => CALL_KEYS.has(k))) return null;

  const names = NAME_KEYS.map((k) => body[k]).filter((v) => v !== undefined);
  const argValues = ARG_KEYS.map((k) => body[k]).filter((v) => v !== undefined);
  if (names.length !== 1 || argValues.length > 1) return null;
  const name = names[0];
  if (typeof name !== "string" || !known.has(name)) return null;

  const args = argsOf(argValues[0]);
  return args === null ? null : { name, args };
}

/** Arguments are an object, a JSON string holding one (OpenAI's wire format), or absent. */
function argsOf(raw: unknown): Record<string, unknown> | null {
  if (raw === undefined || raw === null) return {};
  if (isPlainObject(raw)) return raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return {};
    try {
      const parsed: unknown = JSON.parse(raw);
      return isPlainObject(parsed) ? parsed : null;
    } catch {
      return null;
    }
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** 32-bit FNV-1a as 8 hex digits: short, deterministic ids without async crypto. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}
