/**
 * The one way Beaver sends HTTP to hosts a tenant chose (model providers and embeddings, Gitea,
 * plugin sources, MCP servers, `web_fetch`). When the Worker has an `OUTBOUND` service binding, requests go
 * through it (an egress proxy in production; the test Worker binds an in-process fake); otherwise
 * the runtime's own `fetch`. Keeping it on the environment lets every layer reach it without a
 * module-global. Every request and every redirect hop is checked against the egress policy
 * (storage/egress.ts): redirects are followed here, at most `MAX_REDIRECTS`, never by the runtime.
 *
 * The Worker judges names by their spelling (it cannot resolve DNS); a name that resolves to a
 * private address is the proxy's to refuse (README "Egress policy", self-hosted workerd). A proxy
 * refuses by answering with the header `X-Beaver-Egress: refused` (reason in
 * `X-Beaver-Egress-Reason`), which becomes the same `egress_refused` error as Beaver's own check —
 * only from the `OUTBOUND` binding, so an upstream cannot fake it.
 */
import { AppError } from "../kernel/errors.ts";
import { summariseUpstreamText } from "../kernel/upstream-text.ts";
import { assertEgress, egressPolicy, type EgressPolicy } from "./egress.ts";
import type { Env } from "./env.ts";

export type FetchFn = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

export const MAX_REDIRECTS = 5;

/** The header an egress proxy answers a refused request with (value `refused`), and the one carrying its reason. */
export const EGRESS_REFUSED_HEADER = "X-Beaver-Egress";
export const EGRESS_REASON_HEADER = "X-Beaver-Egress-Reason";

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Credentials a redirect to another origin must not carry (as the Fetch standard drops `Authorization`). */
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key"];

export function outboundFetch(env: Env, policy: EgressPolicy = egressPolicy(env)): FetchFn {
  const located = outboundFetchLocated(env, policy);
  return async (input, init) => (await located(input, init)).response;
}

/** `outboundFetch` that also tells the URL the answer came from, after redirects (web_fetch reports it). */
export function outboundFetchLocated(
  env: Env,
  policy: EgressPolicy = egressPolicy(env),
): (input: RequestInfo | URL, init?: RequestInit) => Promise<{ response: Response; url: URL }> {
  const binding = env.OUTBOUND;
  // Looked up per call, so a test's `vi.spyOn(globalThis, "fetch")` is seen.
  const send: FetchFn = binding ? (input, init) => viaProxy(binding, input, init) : (input, init) => fetch(input, init);
  return (input, init) => fetchChecked(send, policy, input, init);
}

/** Sends through the egress proxy; its refusal (`X-Beaver-Egress: refused`) is an `egress_refused` error, as Beaver's own. */
async function viaProxy(binding: NonNullable<Env["OUTBOUND"]>, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const res = await binding.fetch(input, init);
  if (res.headers.get(EGRESS_REFUSED_HEADER)?.trim().toLowerCase() !== "refused") return res;
  await res.body?.cancel();
  const host = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input).host;
  const reason = summariseUpstreamText(res.headers.get(EGRESS_REASON_HEADER) ?? "", 200) || "no reason given";
  throw new AppError("egress_refused", `${host}: refused by the egress proxy: ${reason}`);
}

async function fetchChecked(
  send: FetchFn,
  policy: EgressPolicy,
  input: RequestInfo | URL,
  init: RequestInit | undefined,
): Promise<{ response: Response; url: URL }> {
  let url: URL;
  let hop: RequestInit;
  if (input instanceof Request) {
    url = new URL(input.url);
    hop = { method: input.method, headers: input.headers, body: input.body, signal: input.signal, ...init };
  } else {
    url = new URL(input instanceof URL ? input.href : input);
    hop = { ...init };
  }
  for (let redirects = 0; ; redirects++) {
    assertEgress(url, policy, redirects === 0 ? undefined : `redirect ${redirects}`);
    const res = await send(url.href, { ...hop, redirect: "manual" });
    const location = res.headers.get("Location");
    if (!REDIRECT_STATUSES.has(res.status) || location === null || hop.redirect === "manual") return { response: res, url };
    if (hop.redirect === "error") {
      await res.body?.cancel();
      throw new AppError("upstream_unavailable", `${url.host} answered ${res.status} with a redirect, which this request does not follow`);
    }
    await res.body?.cancel();
    if (redirects >= MAX_REDIRECTS) throw new AppError("upstream_unavailable", `More than ${MAX_REDIRECTS} redirects from ${url.host}`);
    const next = new URL(location, url);
    hop = redirectedInit(hop, res.status, url, next);
    url = next;
  }
}

/** The next hop's request, as the Fetch standard builds it: 303 (and 301/302 after POST) become GET. */
function redirectedInit(init: RequestInit, status: number, from: URL, to: URL): RequestInit {
  const method = (init.method ?? "GET").toUpperCase();
  const headers = new Headers(init.headers);
  const next: RequestInit = { ...init, headers };
  if ((status === 303 && method !== "GET" && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
    next.method = "GET";
    delete next.body;
    for (const h of ["content-type", "content-length", "content-encoding", "content-language", "content-location"]) headers.delete(h);
  } else if (init.body instanceof ReadableStream) {
    throw new AppError("upstream_unavailable", `${from.host} redirected a streamed request body (${status}), which cannot be sent again`);
  }
  if (from.origin !== to.origin) for (const h of CREDENTIAL_HEADERS) headers.delete(h);
  return next;
}
