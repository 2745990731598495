/**
 * JSON bodies under /api are strict (src/edge/http/json-body.ts): invalid UTF-8 is malformed JSON
 * rather than U+FFFD in storage, nesting is bounded (32 levels by default; README, API overview)
 * instead of overflowing the stack further in, and `__proto__`, `constructor` and `prototype` are
 * refused anywhere like any unknown key rather than silently dropped.
 */
import { describe, expect, it } from "vitest";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { DEFAULT_MAX_JSON_DEPTH, forbiddenKeyPaths, maxJsonDepth, nestingExceeds } from "../../../src/edge/http/json-body.ts";

type Err = { error: { code: string; message: string; details?: unknown } };

const JSON_HEADERS = { "Content-Type": "application/json" };

/** `{"a":{"a":…{}…}}` with `levels` objects. */
function nested(levels: number): string {
  return '{"a":'.repeat(levels - 1) + "{}" + "}".repeat(levels - 1);
}

async function sessionCount(ws: TestWorkspace): Promise<number> {
  return (await json<{ sessions: unknown[] }>(await call("GET", "/api/sessions", { token: ws.read }))).sessions.length;
}

describe("strict JSON bodies", () => {
  it("answers invalid UTF-8 with 400 malformed_json and stores nothing", async () => {
    const ws = await newWorkspace();
    // "caf\xE9": Latin-1 é, not UTF-8; a lenient decoder would store U+FFFD.
    const bytes = new Uint8Array([...new TextEncoder().encode('{"title":"caf'), 0xe9, ...new TextEncoder().encode('"}')]);
    const res = await call("POST", "/api/sessions", { token: ws.member, rawBody: bytes, headers: JSON_HEADERS });
    expect(res.status).toBe(400);
    const err = await json<Err>(res);
    expect(err.error.code).toBe("malformed_json");
    expect(err.error.message).toContain("UTF-8");
    expect(await sessionCount(ws)).toBe(0);

    const config = new Uint8Array([
      ...new TextEncoder().encode('{"runtime":{"system_prompt":"'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}}'),
    ]);
    const put = await call("PUT", "/api/config", { token: ws.admin, rawBody: config, headers: JSON_HEADERS });
    expect(put.status).toBe(400);
    expect((await json<Err>(put)).error.code).toBe("malformed_json");
    // Valid UTF-8 (a BOM and non-ASCII text) is still fine.
    const ok = await call("POST", "/api/sessions", {
      token: ws.member,
      rawBody: new TextEncoder().encode('\uFEFF{"title":"café ☕"}'),
      headers: JSON_HEADERS,
    });
    expect(ok.status).toBe(201);
    expect((await json<{ title: string }>(ok)).title).toBe("café ☕");
  });

  it("answers metadata nested 5,000 levels deep with 400 naming the limit (it was a 500: stack overflow)", async () => {
    const ws = await newWorkspace();
    const body = `{"title":"deep","metadata":${nested(5000)}}`;
    const res = await call("POST", "/api/sessions", { token: ws.member, rawBody: body, headers: JSON_HEADERS });
    expect(res.status).toBe(400);
    const err = await json<Err>(res);
    expect(err.error.code).toBe("validation_failed");
    expect(err.error.message).toContain(`deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`);
    expect(err.error.details).toEqual({ max_depth: DEFAULT_MAX_JSON_DEPTH });
    expect(await sessionCount(ws)).toBe(0);

    // Arrays count too, and a body of nothing but brackets (under the size limit) is no 500 either.
    const brackets = "[".repeat(500_000) + "]".repeat(500_000);
    const flat = await call("POST", "/api/sessions", { token: ws.member, rawBody: brackets, headers: JSON_HEADERS });
    expect(flat.status).toBe(400);
    expect((await json<Err>(flat)).error.code).toBe("validation_failed");
  });

  it("accepts exactly the limit and refuses one level more", async () => {
    const ws = await newWorkspace();
    // The body object is level 1, so metadata may hold 31 levels.
    const atLimit = `{"metadata":${nested(DEFAULT_MAX_JSON_DEPTH - 1)}}`;
    expect((await call("POST", "/api/sessions", { token: ws.member, rawBody: atLimit, headers: JSON_HEADERS })).status).toBe(201);
    const over = `{"metadata":${nested(DEFAULT_MAX_JSON_DEPTH)}}`;
    expect((await call("POST", "/api/sessions", { token: ws.member, rawBody: over, headers: JSON_HEADERS })).status).toBe(400);
    // Brackets inside strings are text, not nesting.
    const inString = `{"title":"${"[{".repeat(100)}"}`;
    expect((await call("POST", "/api/sessions", { token: ws.member, rawBody: inString, headers: JSON_HEADERS })).status).toBe(201);
  });

  it("refuses a top-level __proto__ in PUT /api/config, naming it (it was silently dropped)", async () => {
    const ws = await newWorkspace();
    const body = '{"__proto__":{"runtime":{"max_tool_iterations":1}},"runtime":{"max_tool_iterations":3}}';
    const res = await call("PUT", "/api/config", { token: ws.admin, rawBody: body, headers: JSON_HEADERS });
    expect(res.status).toBe(400);
    const err = await json<Err>(res);
    expect(err.error.code).toBe("validation_failed");
    expect(err.error.message).toContain("__proto__: Unsupported key");
    expect(err.error.details).toEqual([{ path: "__proto__", message: "Unsupported key: __proto__" }]);
    // Nothing was saved.
    expect(await json(await call("GET", "/api/config", { token: ws.read }))).toMatchObject({ runtime: { max_tool_iterations: 8 } });
  });

  it("refuses constructor and prototype keys at any depth, even inside free-form metadata", async () => {
    const ws = await newWorkspace();
    const nestedConfig = '{"runtime":{"constructor":{"x":1}}}';
    const put = await call("PUT", "/api/config", { token: ws.admin, rawBody: nestedConfig, headers: JSON_HEADERS });
    expect(put.status).toBe(400);
    expect((await json<Err>(put)).error.details).toEqual([
      { path: "runtime.constructor", message: "Unsupported key: runtime.constructor" },
    ]);

    const meta = '{"metadata":{"list":[{"ok":1},{"prototype":2}],"__proto__":{"admin":true}}}';
    const res = await call("POST", "/api/sessions", { token: ws.member, rawBody: meta, headers: JSON_HEADERS });
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error.details).toEqual([
      { path: "metadata.__proto__", message: "Unsupported key: metadata.__proto__" },
      { path: "metadata.list.1.prototype", message: "Unsupported key: metadata.list.1.prototype" },
    ]);
    expect(await sessionCount(ws)).toBe(0);
    // The same words as values, or inside longer keys, are ordinary data.
    const fine = '{"metadata":{"kind":"constructor","__proto__x":"prototype"}}';
    expect((await call("POST", "/api/sessions", { token: ws.member, rawBody: fine, headers: JSON_HEADERS })).status).toBe(201);
  });

  it("checks depth and keys without recursion, and reads BEAVER_MAX_JSON_DEPTH strictly", () => {
    expect(nestingExceeds(nested(3), 3)).toBe(false);
    expect(nestingExceeds(nested(4), 3)).toBe(true);
    expect(nestingExceeds('["\\"[[[[["]', 1)).toBe(false);
    expect(forbiddenKeyPaths(JSON.parse('{"a":[{"__proto__":1}]}'))).toEqual(["a.0.__proto__"]);
    expect(forbiddenKeyPaths({ a: 1 })).toEqual([]);
    expect(maxJsonDepth(undefined)).toBe(DEFAULT_MAX_JSON_DEPTH);
    expect(maxJsonDepth("")).toBe(DEFAULT_MAX_JSON_DEPTH);
    expect(maxJsonDepth("64")).toBe(64);
    for (const bad of ["0", "-1", "1.5", "x", "100000"]) expect(() => maxJsonDepth(bad)).toThrow(/BEAVER_MAX_JSON_DEPTH/);
  });
});
