/**
 * Where a workspace's Gitea connection is configured: the connection fields of the `toolchain`
 * section (`gitea_base_url`, `gitea_token_secret`, `timeouts.gitea_request_ms`). The toolchain's own
 * schema validates the section on write; this reader lets plugin sources use the same connection
 * without importing the toolchain (docs/layering.md).
 */
import { z } from "zod";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { memoByObject } from "../../kernel/memo.ts";

const DEFAULT_REQUEST_MS = 10_000;

const ConnectionFields = z.looseObject({
  gitea_base_url: z.string().optional(),
  gitea_token_secret: z.string().optional(),
  timeouts: z.looseObject({ gitea_request_ms: z.number().optional() }).optional(),
});

export interface GiteaConnection {
  baseUrl: string;
  /** Name of the workspace secret holding the API token, if any. */
  tokenSecret?: string;
  timeoutMs: number;
}

/** The configured connection, or null when no Gitea base URL is set; derived once per config object (kernel/memo.ts). */
export const giteaConnectionOf: (config: WorkspaceConfig) => GiteaConnection | null = memoByObject((config) => {
  const parsed = ConnectionFields.safeParse(config.toolchain ?? {});
  if (!parsed.success || !parsed.data.gitea_base_url) return null;
  const { gitea_base_url, gitea_token_secret, timeouts } = parsed.data;
  return Object.freeze({
    baseUrl: gitea_base_url,
    ...(gitea_token_secret ? { tokenSecret: gitea_token_secret } : {}),
    timeoutMs: timeouts?.gitea_request_ms ?? DEFAULT_REQUEST_MS,
  });
});
