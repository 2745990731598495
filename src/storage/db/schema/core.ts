/**
 * Core tables: workspaces, API tokens (hashes only), workspace configuration and encrypted secrets.
 * Every other table carries a `workspace_id` that points here.
 */
import { sqliteTable, text, integer, primaryKey, index } from "drizzle-orm/sqlite-core";

export const workspaces = sqliteTable("workspaces", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    name: text("name").notNull(),
    /** SHA-256 hex of the secret; the secret itself is shown once and never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    /** JSON array of scopes: admin | member | read. */
    scopes: text("scopes").notNull(),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("api_tokens_workspace_idx").on(t.workspaceId)],
);

export const workspaceConfigs = sqliteTable("workspace_configs", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id),
  /** JSON of the validated `WorkspaceConfig`. */
  config: text("config").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * A random token that changes whenever the workspace's skills, curated memory, config, secrets or
 * toolchain agents change. Only triggers write it (migrations 0008 and 0009), so no write path can
 * forget to: a run reads it beside the config and reuses the skill catalog and memory it read under the
 * same token, and webhook intake the secret and agents (docs/performance.md, "Run-open reads",
 * "Webhook intake"). No row: nothing changed since the triggers were added.
 */
export const workspaceRevisions = sqliteTable("workspace_revisions", {
  workspaceId: text("workspace_id").primaryKey(),
  revision: text("revision").notNull(),
});

export const secrets = sqliteTable(
  "secrets",
  {
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    name: text("name").notNull(),
    /** base64 AES-GCM ciphertext (with tag); `iv` base64; AAD binds it to workspace and name. */
    ciphertext: text("ciphertext").notNull(),
    iv: text("iv").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.name] })],
);
