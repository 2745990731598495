/**
 * A Gitea client for a workspace (and optionally an agent): base URL and request timeout from the
 * `toolchain` config, token from the agent's own secret or else the workspace's. Null when the
 * workspace has not configured a Gitea base URL.
 */
import type { Env } from "../../storage/env.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";
import { outboundFetch } from "../../storage/outbound.ts";
import { giteaClient, type GiteaClient } from "../gitea/client.ts";
import type { ToolchainConfig } from "./config.ts";
import type { Agent } from "../tasks/agents.ts";

export async function giteaFor(
  env: Env,
  workspaceId: string,
  config: ToolchainConfig,
  agent?: Agent | null,
  signal?: AbortSignal,
): Promise<GiteaClient | null> {
  if (!config.gitea_base_url) return null;
  const secretName = agent?.giteaTokenSecret ?? config.gitea_token_secret;
  const token = secretName ? await resolveSecret(env, workspaceId, secretName) : undefined;
  return giteaClient({
    baseUrl: config.gitea_base_url,
    token,
    timeoutMs: config.timeouts.gitea_request_ms,
    signal,
    fetch: outboundFetch(env),
  });
}
