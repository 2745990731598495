/**
 * What an API token leaves behind, ended when it is revoked (docs/mcp.md, "Add Beaver to your
 * assistant" and "Personal servers"): the grants it approved for assistants, whose access and refresh
 * tokens stop at once, and its tokens for personal MCP servers. Without it a departed member's
 * assistant kept the workspace for as long as its refresh token slid (30 days at a time), and their
 * accounts on hosted servers stayed stored. A grant cannot connect a personal server (Connect is an
 * `/api` route, which takes API tokens only), so a grant leaves nothing of that kind.
 */
import type { Env } from "../../storage/env.ts";
import { forgetMemberRecords } from "../../domains/mcp/oauth-client.ts";
import { oauthHelpers } from "./provider.ts";

/** Revokes the grants API token `tokenId` of `workspaceId` approved, and forgets its personal-server tokens. */
export async function endWhatTokenApproved(env: Env, origin: string, workspaceId: string, tokenId: string): Promise<void> {
  if (!env.OAUTH_KV) return;
  const helpers = await oauthHelpers(env, origin);
  const grants: string[] = [];
  let cursor: string | undefined;
  do {
    // Grants are keyed by the workspace they give (the library's userId); a member grants only its own.
    const page = await helpers.listUserGrants(workspaceId, cursor === undefined ? {} : { cursor });
    for (const g of page.items) if ((g.metadata as { approved_by?: unknown } | null)?.approved_by === tokenId) grants.push(g.id);
    cursor = page.cursor;
  } while (cursor !== undefined);
  for (const id of grants) await helpers.revokeGrant(id, workspaceId);
  await forgetMemberRecords(env, workspaceId, [tokenId]);
}
