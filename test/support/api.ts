/**
 * Test client for the Worker under test: calls the default export's fetch in-process (same workerd),
 * plus helpers to make a fresh workspace with tokens of each scope.
 */
import { exports } from "cloudflare:workers";
import { randomToken } from "../../src/kernel/ids.ts";

export const ADMIN = "test-admin-token";

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
}

export async function call(method: string, path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: BodyInit | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(`https://beaver.test${path}`, { method, headers, body }));
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export interface TestWorkspace {
  id: string;
  admin: string;
  member: string;
  read: string;
}

/** A new workspace with one token per scope, created through the API as a user would; a random id unless given. */
export async function newWorkspace(id = `ws-${randomToken(10)}`): Promise<TestWorkspace> {
  const created = await call("POST", "/api/workspaces", { body: { id, name: id } });
  if (created.status !== 201) throw new Error(`workspace create failed: ${created.status} ${await created.text()}`);
  const tokens: Record<string, string> = {};
  for (const scope of ["admin", "member", "read"] as const) {
    const res = await call("POST", "/api/tokens", { body: { name: scope, scopes: [scope], workspace_id: id } });
    if (res.status !== 201) throw new Error(`token create failed: ${res.status} ${await res.text()}`);
    tokens[scope] = (await json<{ token: string }>(res)).token;
  }
  return { id, admin: tokens.admin!, member: tokens.member!, read: tokens.read! };
}
