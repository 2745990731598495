/**
 * D1 tables of curated memory (docs/memory.md): the entries of each store (`notes`, `profile`) per
 * scope (the workspace, or one toolchain agent), and the append-only history of every change to
 * them — who (a token, or a run of a session), what (old and new text) and when.
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { workspaces } from "./core.ts";

/** One remembered fact. `scope` is `workspace` or `agent:<agent id>`; `norm` is the text normalised for duplicate checks. */
export const memoryEntries = sqliteTable(
  "memory_entries",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    scope: text("scope").notNull(),
    /** notes | profile */
    store: text("store").notNull(),
    text: text("text").notNull(),
    norm: text("norm").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("memory_entries_scope_idx").on(t.workspaceId, t.scope, t.store, t.createdAt),
    uniqueIndex("memory_entries_norm_uq").on(t.workspaceId, t.scope, t.store, t.norm),
  ],
);

/** The audit trail of memory: one row per change, never updated. */
export const memoryChanges = sqliteTable(
  "memory_changes",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    scope: text("scope").notNull(),
    store: text("store").notNull(),
    /** add | replace | remove | put */
    action: text("action").notNull(),
    /** The entry changed; null for a whole-store `put`. */
    entryId: text("entry_id"),
    /** Text before (replace, remove) as JSON-free plain text; for `put`, a JSON array of the old entries. */
    oldText: text("old_text"),
    /** Text after (add, replace); for `put`, a JSON array of the new entries. */
    newText: text("new_text"),
    /** token | run */
    actorKind: text("actor_kind").notNull(),
    /** The API token id (`bootstrap` for the admin token) or the run id. */
    actorId: text("actor_id").notNull(),
    /** The session of a run actor. */
    sessionId: text("session_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("memory_changes_scope_idx").on(t.workspaceId, t.scope, t.seq)],
);
