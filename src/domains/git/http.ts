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
import { boundedChunks, collectBytes } from "../../storage/outbound-body.ts";

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

export function gitHttp(options: GitHttpOptions): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const url = new URL(req.url);
      const headers = new Headers(req.headers ?? {});
      for (const [k, v] of Object.entries((await options.credentials(url)) ?? {})) headers.set(k, v);
      const body = await collectBytes(req.body as AsyncIterable<Uint8Array> | undefined);
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
        body: boundedChunks(res.body, options.maxResponseBytes, () => new GitTooLargeError(options.maxResponseBytes)),
      };
    },
  };
}
