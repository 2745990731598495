/**
 * Parses JSON request bodies under /api once, up front, and holds them to rules JSON.parse and zod
 * do not keep: the bytes must be valid UTF-8 (not silently turned into U+FFFD), nesting is bounded
 * (deep bodies overflowed the stack further in), and the keys `__proto__`, `constructor` and
 * `prototype` are refused anywhere (JSON.parse makes `__proto__` an own key that zod then drops
 * without a word, so a strict schema never saw it), and no string — key or value — may hold text
 * Beaver does not store (NUL, other C0 controls but tab and newlines, lone surrogates:
 * kernel/stored-text.ts), so every stored field is held to it without each schema repeating it.
 * A violation is remembered as a typed error, not
 * thrown here: the route still decides, so one that does not take JSON answers 415 first, and one
 * that does reads a body that fails to parse, whose 400 `errorResponse` turns into that error.
 * Not for /webhooks: signature checks need the raw bytes. See README (API overview) for the limit.
 */
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { AppError } from "../../kernel/errors.ts";
import { unstorableTextPaths } from "../../kernel/stored-text.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Levels of objects and arrays a JSON body may nest (`{"a":{}}` is 2); `BEAVER_MAX_JSON_DEPTH` overrides it. */
export const DEFAULT_MAX_JSON_DEPTH = 32;
/** The highest `BEAVER_MAX_JSON_DEPTH` accepted: deeper values are not safe for the recursive code behind the routes. */
export const MAX_JSON_DEPTH_CEILING = 256;

/** Keys that name prototype machinery rather than data; refused like any unknown key. */
const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export const parseJsonBodies = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  if (method !== "GET" && method !== "HEAD" && JSON_TYPE.test(c.req.header("Content-Type") ?? "")) {
    const problem = await checkJsonBody(c, maxJsonDepth(c.env.BEAVER_MAX_JSON_DEPTH));
    if (problem) c.set("jsonBodyProblem", problem);
  }
  await next();
});

/** Why this request's JSON body was refused (malformed, not UTF-8, too deep, forbidden key), if it was. */
export function jsonBodyProblem(c: Context): AppError | undefined {
  const problem: unknown = c.get("jsonBodyProblem");
  return problem instanceof AppError ? problem : undefined;
}

/** The depth limit from the Worker var, or the default; a value that is not a whole number in range is the operator's error. */
export function maxJsonDepth(configured: string | undefined): number {
  if (configured === undefined || configured.trim() === "") return DEFAULT_MAX_JSON_DEPTH;
  const n = /^\s*\d+\s*$/.test(configured) ? Number(configured) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_JSON_DEPTH_CEILING) {
    throw new AppError("server_misconfigured", `BEAVER_MAX_JSON_DEPTH must be a whole number from 1 to ${MAX_JSON_DEPTH_CEILING}`);
  }
  return n;
}

/**
 * Reads the body's bytes, decodes them strictly and parses them. Hono caches the body text, and its
 * `json()` (which validators use) parses that text: the cache gets the strict decoding, or — when the
 * body is refused — a failed read, so no handler ever sees a refused body.
 */
async function checkJsonBody(c: Context, maxDepth: number): Promise<AppError | undefined> {
  const bytes = await c.req.arrayBuffer();
  const cache = c.req.bodyCache as unknown as { text?: Promise<string> };
  const refuse = (problem: AppError): AppError => {
    const failed = Promise.reject(problem);
    failed.catch(() => {}); // handled by whoever reads it; no unhandled-rejection report meanwhile
    cache.text = failed;
    return problem;
  };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return refuse(new AppError("malformed_json", "Malformed JSON in request body: not valid UTF-8"));
  }
  cache.text = Promise.resolve(text);
  // Checked on the text before parsing, so neither the parser nor the key walk meets a deep value.
  if (nestingExceeds(text, maxDepth)) {
    return refuse(
      new AppError("validation_failed", `Invalid body: JSON nests deeper than ${maxDepth} levels of objects and arrays`, {
        details: { max_depth: maxDepth },
      }),
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return new AppError("malformed_json", "Malformed JSON in request body");
  }
  const forbidden = forbiddenKeyPaths(value);
  if (forbidden.length > 0) {
    const details = forbidden.map((path) => ({ path, message: `Unsupported key: ${path}` }));
    return refuse(new AppError("validation_failed", `Invalid body: ${details[0]!.path}: ${details[0]!.message}`, { details }));
  }
  const unstorable = unstorableTextPaths(value);
  if (unstorable.length > 0) {
    const first = unstorable[0]!;
    return refuse(new AppError("validation_failed", `Invalid body: ${first.path}: ${first.message}`, { details: unstorable.slice(0, 20) }));
  }
  return undefined;
}

/**
 * True when the JSON text opens more than `max` objects/arrays at once. A single pass over the
 * characters, skipping string contents, with no recursion: it cannot overflow on any input. On text
 * that is not JSON the count may be off, but then the parse that follows refuses it anyway.
 */
export function nestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */ || ch === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (ch === 0x7d /* } */ || ch === 0x5d /* ] */) depth--;
  }
  return false;
}

/** Dotted paths (as in validation errors) of every forbidden key in a parsed JSON value; iterative. */
export function forbiddenKeyPaths(root: unknown): string[] {
  const found: string[] = [];
  const stack: { value: unknown; path: string[] }[] = [{ value: root, path: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path } = item;
    if (Array.isArray(value)) {
      value.forEach((v: unknown, i) => stack.push({ value: v, path: [...path, String(i)] }));
    } else if (value !== null && typeof value === "object") {
      for (const [key, v] of Object.entries(value)) {
        if (FORBIDDEN_KEYS.has(key)) found.push([...path, key].join("."));
        else stack.push({ value: v, path: [...path, key] });
      }
    }
  }
  return found.sort();
}
