/**
 * isomorphic-git's HTTP client over Beaver's egress-checked fetch (storage/outbound.ts): every request
 * and redirect hop of a clone or push is judged by the egress policy like any other outbound call.
 * Credentials (the workspace's Gitea token) are added here, per request, only for the host they belong
 * to: they never appear in a URL, in `.git/config`, or in anything the model reads. A response larger
 * than `maxResponseBytes` (a clone over the size limit) is cut off with a readable error before it is
 * all in memory.
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from "isomorphic-git";
import type { FetchFn } from "../../storage/outbound.ts";

export class GitTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the remote sent more than ${limit} bytes`);
    this.name = "GitTooLargeError";
  }
}

export interface GitHttpOptions {
  fetch: FetchFn;
  /** Headers (e.g. `Authorization`) for a request to `url`, or null when none belong to its host. */
  credentials(url: URL): Promise<Record<string, string> | null>;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

async function collect(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array | undefined> {
  if (!body) return undefined;
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const part of body) {
    parts.push(part);
    size += part.byteLength;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

async function* capped(body: ReadableStream<Uint8Array> | null, max: number): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      size += value.byteLength;
      if (size > max) throw new GitTooLargeError(max);
      yield value;
    }
  } finally {
    reader.releaseLock();
    if (size > max) await body.cancel().catch(() => undefined);
  }
}

export function gitHttp(options: GitHttpOptions): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const url = new URL(req.url);
      const headers = new Headers(req.headers ?? {});
      for (const [k, v] of Object.entries((await options.credentials(url)) ?? {})) headers.set(k, v);
      const body = await collect(req.body as AsyncIterable<Uint8Array> | undefined);
      const res = await options.fetch(url.href, {
        method: req.method ?? "GET",
        headers,
        ...(body ? { body } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const out: Record<string, string> = {};
      res.headers.forEach((v, k) => (out[k] = v));
      return {
        url: res.url || url.href,
        method: req.method ?? "GET",
        statusCode: res.status,
        statusMessage: res.statusText,
        headers: out,
        body: capped(res.body, options.maxResponseBytes),
      };
    },
  };
}
