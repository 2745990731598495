/**
 * D1 tables of run receipts (docs/learning.md, "Run receipts"): one receipt per finished run, derived
 * from the replicated log by the learning domain, the skills each run activated (a child table so a
 * skill's runs are found by index, not by scanning JSON), and the feedback people give a run. Feedback
 * is its own table so a rating given before or while the receipt is derived is never lost; receipts
 * join it when they are read.
 */
import { sqliteTable, text, integer, index, primaryKey } from "drizzle-orm/sqlite-core";

export const runReceipts = sqliteTable(
  "run_receipts",
  {
    runId: text("run_id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    sessionId: text("session_id").notNull(),
    /** The toolchain or mail agent whose run it was (session metadata `agent_id`); null for chat runs. */
    agentId: text("agent_id"),
    /** completed | failed | cancelled */
    status: text("status").notNull(),
    /** Toolchain runs: pending | verified | failed | cancelled | superseded; null for other runs. */
    verification: text("verification"),
    /** success | failure | cancelled | pending: the status, overridden by the verification when there is one. */
    outcome: text("outcome").notNull(),
    /** JSON: the receipt body (skills, tools, usage, model, error). */
    body: text("body").notNull(),
    endedAt: integer("ended_at").notNull(),
    derivedAt: integer("derived_at").notNull(),
  },
  (t) => [
    index("run_receipts_workspace_agent_idx").on(t.workspaceId, t.agentId),
    index("run_receipts_verification_idx").on(t.verification),
  ],
);

export const runReceiptSkills = sqliteTable(
  "run_receipt_skills",
  {
    runId: text("run_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    skillName: text("skill_name").notNull(),
    version: text("version").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.skillName] }), index("run_receipt_skills_skill_idx").on(t.workspaceId, t.skillName)],
);

export const runFeedback = sqliteTable("run_feedback", {
  runId: text("run_id").primaryKey(),
  workspaceId: text("workspace_id").notNull(),
  sessionId: text("session_id").notNull(),
  /** up | down */
  rating: text("rating").notNull(),
  comment: text("comment"),
  /** The token that gave it. */
  givenBy: text("given_by").notNull(),
  createdAt: integer("created_at").notNull(),
});
