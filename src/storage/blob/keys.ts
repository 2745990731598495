/**
 * The R2 key layout of the content-addressed store. Keys never leave the server: API responses
 * name files by path and content by hash only.
 */
export function workspacePrefix(workspaceId: string): string {
  return `ws/${encodeURIComponent(workspaceId)}/`;
}

export function blobKey(workspaceId: string, sha256: string): string {
  return `${workspacePrefix(workspaceId)}blobs/${sha256.slice(0, 2)}/${sha256}`;
}

export function treeKey(workspaceId: string, treeHash: string): string {
  return `${workspacePrefix(workspaceId)}trees/${treeHash}.json`;
}

export function blobsPrefix(workspaceId: string): string {
  return `${workspacePrefix(workspaceId)}blobs/`;
}

export function treesPrefix(workspaceId: string): string {
  return `${workspacePrefix(workspaceId)}trees/`;
}

/** The hash at the end of a blob or tree key, or null for a foreign key. */
export function hashOfKey(key: string): string | null {
  const m = /([0-9a-f]{64})(\.json)?$/.exec(key);
  return m?.[1] ?? null;
}

/**
 * A session workspace's large file (docs/workspace.md): under `files/`, not `blobs/`, so the skill
 * store's orphan collector (which deletes unindexed objects under `blobs/`) never sees it. Shared by
 * the workspace's sessions: the same content is stored once.
 */
export function fileBlobKey(workspaceId: string, sha256: string): string {
  return `${workspacePrefix(workspaceId)}files/${sha256.slice(0, 2)}/${sha256}`;
}
