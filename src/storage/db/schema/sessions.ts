/**
 * D1 tables of the sessions area: the replicated copy of each SessionDO's log, where sessions are
 * listed and searched. The SessionDO's own storage is the source of truth; these rows are written
 * idempotently (by id) by its replicator, so a retried batch never duplicates anything.
 */
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";

/** One row per session: the projection clients list (title, status, timestamps, last seq, usage). */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    title: text("title").notNull(),
    /** open | closed */
    status: text("status").notNull(),
    /** JSON object supplied at creation (shown to the model as session metadata). */
    metadata: text("metadata").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Highest seq of a persistent event replicated so far. */
    lastSeq: integer("last_seq").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    totalTokens: integer("total_tokens").notNull(),
    /** When a person archived it (PATCH /api/sessions/:id): left out of the list and search unless asked for; null when not archived. */
    archivedAt: integer("archived_at"),
  },
  (t) => [index("sessions_workspace_updated_idx").on(t.workspaceId, t.updatedAt)],
);

/** Every persistent event of every session, keyed by its random id (the idempotency key of replication). */
export const sessionEvents = sqliteTable(
  "session_events",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    runId: text("run_id"),
    parentId: text("parent_id"),
    /** 1 for run facts (run_started, system_prompt_snapshotted…): admins only, never searched. */
    hidden: integer("hidden").notNull(),
    /** The whole event as JSON (the wire format). */
    payload: text("payload").notNull(),
    /** Visible text for search; null for events with nothing to search (and for hidden ones). */
    searchText: text("search_text"),
    ts: integer("ts").notNull(),
  },
  (t) => [
    uniqueIndex("session_events_session_seq_idx").on(t.sessionId, t.seq),
    index("session_events_session_run_idx").on(t.sessionId, t.runId),
    index("session_events_workspace_idx").on(t.workspaceId),
  ],
);

/** Runs of a session (status and result), replicated from the SessionDO's run queue. */
export const sessionRuns = sqliteTable(
  "session_runs",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    /** queued | running | completed | failed | cancelled */
    status: text("status").notNull(),
    idempotencyKey: text("idempotency_key"),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    endedAt: integer("ended_at"),
    /** RunResult JSON once the run ended. */
    result: text("result"),
  },
  (t) => [index("session_runs_session_idx").on(t.sessionId, t.createdAt)],
);
