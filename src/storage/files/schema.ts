/**
 * The session workspace's tables in the SessionDO's SQLite (docs/workspace.md, "Storage layout"):
 * content-addressed blobs (small ones inline, large ones only named here and stored in R2), directory
 * trees named by the hash of their listing, and the tree each file-changing tool call left behind.
 * Applied as one SessionDO migration (src/runtime/session/do-storage.ts).
 */
export const WORKSPACE_FILES_SCHEMA: readonly string[] = [
  // `data` NULL: the content is in R2 under fileBlobKey(workspace, hash).
  `CREATE TABLE IF NOT EXISTS ws_blobs (hash TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB)`,
  // One directory: its entries as canonical JSON (the text its hash is taken over).
  `CREATE TABLE IF NOT EXISTS ws_trees (hash TEXT PRIMARY KEY, body TEXT NOT NULL)`,
  // The root tree after a file-changing tool call; a run's tool result event names (run_id, tool_call_id).
  `CREATE TABLE IF NOT EXISTS ws_calls (
     run_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, tree_hash TEXT NOT NULL, at INTEGER NOT NULL,
     PRIMARY KEY (run_id, tool_call_id))`,
  // Small facts about the workspace (the git remote, the clone's base commit…), by key.
  `CREATE TABLE IF NOT EXISTS ws_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
];
