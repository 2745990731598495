/**
 * The one way Beaver sends HTTP to hosts a tenant chose (Gitea, plugin sources; later MCP servers
 * and web fetch). When the Worker has an `OUTBOUND` service binding, requests go through it (an
 * egress proxy in production; the test Worker binds an in-process fake); otherwise the runtime's
 * own `fetch`. Keeping it on the environment lets every layer reach it without a module-global.
 */
import type { Env } from "./env.ts";

export type FetchFn = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

export function outboundFetch(env: Env): FetchFn {
  const binding = env.OUTBOUND;
  return binding ? (input, init) => binding.fetch(input, init) : (input, init) => fetch(input, init);
}
