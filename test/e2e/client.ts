/** A small HTTP client for e2e tests: real fetch against the running `wrangler dev`. */
import { inject } from "vitest";

export const baseUrl = (): string => inject("baseUrl");
export const adminToken = (): string => inject("adminToken");

export async function api(
  method: string,
  path: string,
  opts: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...opts.headers };
  const token = opts.token === undefined ? adminToken() : opts.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  return fetch(`${baseUrl()}${path}`, { method, headers, body });
}

/** A fresh workspace with an admin token, created through the API. */
export async function newWorkspace(): Promise<{ id: string; token: string }> {
  const id = `e2e-${Math.random().toString(36).slice(2, 10)}`;
  const ws = await api("POST", "/api/workspaces", { body: { id, name: id } });
  if (ws.status !== 201) throw new Error(`workspace: ${ws.status} ${await ws.text()}`);
  const tok = await api("POST", "/api/tokens", { body: { name: "e2e", scopes: ["admin"], workspace_id: id } });
  if (tok.status !== 201) throw new Error(`token: ${tok.status} ${await tok.text()}`);
  return { id, token: ((await tok.json()) as { token: string }).token };
}

/** Polls `probe` every 100 ms until it gives a value, failing with what was awaited after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
