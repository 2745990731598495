/**
 * Fetching a repository archive from Gitea: `GET /api/v1/repos/{owner}/{repo}/archive/{ref}.tar.gz`
 * (operation `repoGetArchive` in Gitea 1.22's API). The body is read with a byte cap so an oversized
 * archive is cut off, not buffered. 404 means the repository or ref is gone — the caller marks its
 * plugins missing; every other failure is the infrastructure's.
 */
import { AppError } from "../../kernel/errors.ts";
import { OutputTooLarge, readBounded } from "../../storage/archive/bounded.ts";
import type { FetchFn } from "../../storage/outbound.ts";
import { summariseUpstreamText } from "../../kernel/upstream-text.ts";

export interface ArchiveRequest {
  baseUrl: string;
  token?: string;
  owner: string;
  repo: string;
  /** Branch, tag or commit SHA. */
  ref: string;
  maxBytes: number;
  timeoutMs: number;
}

export type ArchiveFetch = { status: "ok"; bytes: Uint8Array } | { status: "not_found" };

export function archiveUrl(r: Pick<ArchiveRequest, "baseUrl" | "owner" | "repo" | "ref">): string {
  const base = r.baseUrl.replace(/\/+$/, "");
  return `${base}/api/v1/repos/${encodeURIComponent(r.owner)}/${encodeURIComponent(r.repo)}/archive/${encodeURIComponent(r.ref)}.tar.gz`;
}

export async function fetchGiteaArchive(r: ArchiveRequest, fetchImpl: FetchFn): Promise<ArchiveFetch> {
  const url = archiveUrl(r);
  const where = `GET /repos/${r.owner}/${r.repo}/archive/${r.ref}.tar.gz`;
  let res: Response;
  try {
    res = await fetchImpl(url, {
      headers: { Accept: "application/octet-stream", ...(r.token ? { Authorization: `token ${r.token}` } : {}) },
      signal: AbortSignal.timeout(r.timeoutMs),
    });
  } catch (e) {
    // A refused address (storage/egress.ts) is the configuration's fault, not Gitea's: say so as is.
    if (e instanceof AppError && e.code === "egress_refused") throw e;
    throw new AppError(
      "upstream_unavailable",
      `Gitea unreachable (${where}): ${summariseUpstreamText(e instanceof Error ? e.message : String(e))}`,
    );
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return { status: "not_found" };
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new AppError("upstream_unavailable", `Gitea answered ${res.status} to ${where}`, { details: { status: res.status } });
  }
  const declared = Number(res.headers.get("Content-Length") ?? "0");
  if (declared > r.maxBytes) {
    await res.body.cancel();
    throw new AppError("payload_too_large", `Archive from Gitea is ${declared} bytes (limit ${r.maxBytes})`, {
      details: { limit_bytes: r.maxBytes },
    });
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBounded(res.body, r.maxBytes);
  } catch (e) {
    if (e instanceof OutputTooLarge)
      throw new AppError("payload_too_large", `Archive from Gitea exceeds ${r.maxBytes} bytes`, { details: { limit_bytes: r.maxBytes } });
    throw new AppError(
      "upstream_unavailable",
      `Gitea's answer to ${where} broke off: ${summariseUpstreamText(e instanceof Error ? e.message : String(e))}`,
    );
  }
  return { status: "ok", bytes };
}
