/**
 * D1 tables of the toolchain area: agents, webhook deliveries, the pull-request index, toolchain tasks
 * (with comments, outputs and history) and — kept apart (docs/toolchain.md, "Mail between agents") —
 * mail tasks between agents. Comment types are validated in application code, not by a CHECK
 * constraint, so a new type never needs a table rebuild.
 */
import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Agents a workspace routes toolchain work to; each is a Gitea user. */
export const toolchainAgents = sqliteTable(
  "toolchain_agents",
  {
    workspaceId: text("workspace_id").notNull(),
    id: text("id").notNull(),
    giteaUsername: text("gitea_username").notNull(),
    /** Lower-cased username: Gitea compares usernames without case. */
    usernameKey: text("username_key").notNull(),
    /** JSON array of reviewer | developer | infra | supervisor. */
    roles: text("roles").notNull(),
    /** JSON ModelEntry or null (the workspace's main model). */
    model: text("model"),
    /** Name of a workspace secret with this agent's own Gitea token (else the workspace token). */
    giteaTokenSecret: text("gitea_token_secret"),
    /** JSON array of skill names pinned to this agent's runs (null: none). */
    skills: text("skills"),
    enabled: integer("enabled").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] }), uniqueIndex("toolchain_agents_username_idx").on(t.workspaceId, t.usernameKey)],
);

/** One row per accepted or rejected signed delivery: the dedupe key and its first outcome. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    workspaceId: text("workspace_id").notNull(),
    deliveryId: text("delivery_id").notNull(),
    eventType: text("event_type").notNull(),
    action: text("action"),
    repo: text("repo"),
    /**
     * received | processing (the delivery is recorded and its processing runs after the 202) then
     * tasks_created | ignored | rejected | failed (docs/toolchain.md, "Webhook intake").
     */
    outcome: text("outcome").notNull(),
    reason: text("reason"),
    /** JSON array of the task ids this delivery created. */
    taskIds: text("task_ids").notNull(),
    /** HTTP status of the first answer (redeliveries answer 200 with this outcome). */
    statusCode: integer("status_code").notNull(),
    bodySha256: text("body_sha256").notNull(),
    /**
     * 1 while this delivery guards its signed body against replay under another delivery id
     * (docs/toolchain.md, "Webhook intake"); NULL once a later delivery of the same body took over
     * after the replay window, and on rows written before replay protection existed.
     */
    bodyGuard: integer("body_guard"),
    receivedAt: integer("received_at").notNull(),
    /** The signed body as text, kept until the delivery is processed (NULL after; the processing reads it after the answer). */
    body: text("body"),
    /** The processor holding this delivery while `processing` (a random token); only its write of the outcome lands. */
    claim: text("claim"),
    claimedAt: integer("claimed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.deliveryId] }),
    index("webhook_deliveries_received_idx").on(t.workspaceId, t.receivedAt),
    // The recovery sweep's scan: deliveries still received or processing, oldest first, across workspaces.
    index("webhook_deliveries_outcome_idx").on(t.outcome, t.receivedAt),
    // At most one guarding delivery per signed body: two replays racing in with new delivery ids cannot both be accepted.
    uniqueIndex("webhook_deliveries_body_idx")
      .on(t.workspaceId, t.bodySha256)
      .where(sql`body_guard IS NOT NULL`),
  ],
);

/** Pull requests seen in webhooks, so a commit status or workflow event finds its PR without Gitea. */
export const pullRequestIndex = sqliteTable(
  "pull_request_index",
  {
    workspaceId: text("workspace_id").notNull(),
    repo: text("repo").notNull(),
    number: integer("number").notNull(),
    headSha: text("head_sha").notNull(),
    headRef: text("head_ref").notNull(),
    baseRef: text("base_ref").notNull(),
    author: text("author").notNull(),
    title: text("title").notNull(),
    state: text("state").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.repo, t.number] }),
    index("pull_request_index_sha_idx").on(t.workspaceId, t.repo, t.headSha),
  ],
);

export const toolchainTasks = sqliteTable(
  "toolchain_tasks",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    /** The delivery that created it; null for tasks Beaver created itself (infrastructure failures). */
    deliveryId: text("delivery_id"),
    agentId: text("agent_id").notNull(),
    title: text("title").notNull(),
    /** The rendered event. */
    description: text("description").notNull(),
    eventType: text("event_type").notNull(),
    actionType: text("action_type").notNull(),
    /** JSON: event_type, action_type, steps[], context{}, from, source. */
    mustHaves: text("must_haves").notNull(),
    repo: text("repo"),
    /** PR or issue number the task is about, when there is one. */
    number: integer("number"),
    /**
     * Open tasks with the same key are one piece of work (a CI failure reported by several events);
     * the partial unique index below makes that exact when such events arrive at the same moment.
     */
    dedupeKey: text("dedupe_key"),
    /** pending | working | done | failed | cancelled */
    status: text("status").notNull(),
    attempts: integer("attempts").notNull(),
    businessFailures: integer("business_failures").notNull(),
    reminderSent: integer("reminder_sent").notNull(),
    /** A pending task is not dispatched before this time (retry backoff). */
    notBefore: integer("not_before").notNull(),
    /** A working task without a report by this time gets a reminder, then fails. */
    deadlineAt: integer("deadline_at"),
    sessionId: text("session_id"),
    runId: text("run_id"),
    /** business | system | infrastructure, for failed tasks. */
    failureKind: text("failure_kind"),
    lastError: text("last_error"),
    /** The task whose failure created this one. */
    originTaskId: text("origin_task_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("toolchain_tasks_status_idx").on(t.workspaceId, t.status, t.notBefore),
    index("toolchain_tasks_agent_idx").on(t.workspaceId, t.agentId),
    index("toolchain_tasks_repo_idx").on(t.workspaceId, t.repo, t.number),
    // At most one open task per piece of work. The status list is OPEN_STATUSES of task-model.ts.
    uniqueIndex("toolchain_tasks_open_dedupe_idx")
      .on(t.workspaceId, t.dedupeKey)
      .where(sql`status IN ('pending', 'working') AND dedupe_key IS NOT NULL`),
    index("toolchain_tasks_created_idx").on(t.workspaceId, t.createdAt),
  ],
);

export const toolchainTaskComments = sqliteTable(
  "toolchain_task_comments",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    author: text("author").notNull(),
    commentType: text("comment_type").notNull(),
    body: text("body").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("toolchain_task_comments_task_idx").on(t.taskId, t.createdAt)],
);

export const toolchainTaskOutputs = sqliteTable(
  "toolchain_task_outputs",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    type: text("type").notNull(),
    content: text("content").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("toolchain_task_outputs_task_idx").on(t.taskId, t.createdAt)],
);

/** Every status change and notable fact (runs, failures, routes taken) of a toolchain task. */
export const toolchainTaskHistory = sqliteTable(
  "toolchain_task_history",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    event: text("event").notNull(),
    fromStatus: text("from_status"),
    toStatus: text("to_status"),
    /** JSON object with the facts of this entry. */
    detail: text("detail").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("toolchain_task_history_task_idx").on(t.taskId, t.at)],
);

/** Mail between agents: `inform` (no action) or `request` (a reply is expected). Never toolchain events. */
export const mailTasks = sqliteTable(
  "mail_tasks",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    fromAgent: text("from_agent").notNull(),
    toAgent: text("to_agent").notNull(),
    /** inform | request */
    performative: text("performative").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    /** The request this mail answers. */
    inReplyTo: text("in_reply_to"),
    /** pending | working | done | failed | cancelled */
    status: text("status").notNull(),
    attempts: integer("attempts").notNull(),
    sessionId: text("session_id"),
    runId: text("run_id"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("mail_tasks_status_idx").on(t.workspaceId, t.status),
    index("mail_tasks_to_idx").on(t.workspaceId, t.toAgent),
    index("mail_tasks_reply_idx").on(t.workspaceId, t.inReplyTo),
  ],
);

export const mailTaskHistory = sqliteTable(
  "mail_task_history",
  {
    id: text("id").primaryKey(),
    mailId: text("mail_id").notNull(),
    workspaceId: text("workspace_id").notNull(),
    event: text("event").notNull(),
    fromStatus: text("from_status"),
    toStatus: text("to_status"),
    detail: text("detail").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("mail_task_history_mail_idx").on(t.mailId, t.at)],
);
