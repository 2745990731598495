/**
 * Runs mail tasks: each pending mail becomes a run of its recipient in the mail's own session, and
 * when the run is over the mail handler decides: read (inform) or answered (request) → done;
 * otherwise one more attempt, then failed. Mail never touches Gitea or toolchain tasks.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { listAgents } from "../tasks/agent-store.ts";
import { awaitRun, isRunOver, sessionIdOf, startAgentRun } from "../tasks/agent-run.ts";
import type { RunResult } from "../../runtime/index.ts";
import { mailHandler } from "./handler.ts";
import { pendingMail, repliesFrom, transitionMail, workingMail, workspacesWithOpenMail, type MailTask } from "./store.ts";
import type { TaskType } from "../tasks/task-type.ts";

const MAX_ATTEMPTS = 2;
const MAX_WORKING = 2;
const RUN_WAIT_MS = 120_000;

async function finishMail(env: Env, workspaceId: string, mail: MailTask, result: RunResult, now: number): Promise<void> {
  if (result.status !== "completed") {
    await failOrRetry(env, workspaceId, mail, `the run ${result.status}: ${result.error?.message ?? result.finish_reason}`, now);
    return;
  }
  const verdict = mailHandler.verify(mail, { replies: (await repliesFrom(env, workspaceId, mail)).length });
  if (verdict.passed) {
    await transitionMail(env, workspaceId, mail.id, {
      from: ["working"],
      to: "done",
      set: { completed_at: now },
      event: "verified",
      detail: { reason: verdict.reason },
      now,
    });
  } else {
    await failOrRetry(env, workspaceId, mail, verdict.detail, now);
  }
}

async function failOrRetry(env: Env, workspaceId: string, mail: MailTask, reason: string, now: number): Promise<void> {
  const retry = mail.attempts < MAX_ATTEMPTS;
  await transitionMail(env, workspaceId, mail.id, {
    from: ["working"],
    to: retry ? "pending" : "failed",
    set: { last_error: reason.slice(0, 2000), ...(retry ? {} : { completed_at: now }) },
    event: retry ? "retry_scheduled" : "failed",
    detail: { reason },
    now,
  });
}

async function startMail(
  env: Env,
  workspaceId: string,
  mail: MailTask,
  model: Parameters<typeof startAgentRun>[1]["model"],
  now: number,
  skills: string[],
): Promise<void> {
  const attempt = mail.attempts + 1;
  const claimed = await transitionMail(env, workspaceId, mail.id, {
    from: ["pending"],
    to: "working",
    set: { attempts: attempt, session_id: sessionIdOf(mail.id), run_id: null },
    event: "claimed",
    detail: { attempt },
    now,
  });
  if (!claimed) return;
  const claimedMail = { ...mail, attempts: attempt, status: "working" as const };
  try {
    const { sessionId, runId } = await startAgentRun(env, {
      workspaceId,
      taskId: mail.id,
      title: `Mail: ${mail.subject}`,
      toolset: "mail",
      metadata: { mail_id: mail.id, task_type: "mail", performative: mail.performative, agent_id: mail.toAgent },
      content: mailHandler.runContent(claimedMail, { kind: "start" }),
      systemPrompt: mailHandler.systemPrompt(claimedMail),
      toolData: { mail_id: mail.id, agent_id: mail.toAgent },
      model,
      skills,
      idempotencyKey: `${mail.id}:attempt:${attempt}`,
      channel: { channel: "mail", external_id: mail.id, metadata: { attempt, from_agent: mail.fromAgent, to_agent: mail.toAgent } },
    });
    await transitionMail(env, workspaceId, mail.id, {
      from: ["working"],
      to: "working",
      set: { run_id: runId },
      event: "run_started",
      detail: { run_id: runId },
      now,
    });
    const result = await awaitRun(env, workspaceId, sessionId, runId, RUN_WAIT_MS);
    if (isRunOver(result)) await finishMail(env, workspaceId, claimedMail, result, Date.now());
  } catch (err) {
    await failOrRetry(env, workspaceId, claimedMail, err instanceof AppError ? `${err.code}: ${err.message}` : String(err), now);
  }
}

/** One dispatch pass over a workspace's mail. */
export async function dispatchMail(env: Env, workspaceId: string, now = Date.now()): Promise<void> {
  for (const mail of await workingMail(env, workspaceId)) {
    if (!mail.runId || !mail.sessionId) continue;
    const result = await awaitRun(env, workspaceId, mail.sessionId, mail.runId, 1);
    if (isRunOver(result)) await finishMail(env, workspaceId, mail, result, now);
  }
  const slots = Math.max(0, MAX_WORKING - (await workingMail(env, workspaceId)).length);
  if (!slots) return;
  const agents = await listAgents(env, workspaceId);
  const ready = await pendingMail(env, workspaceId, now, slots);
  await Promise.all(
    ready.map(async (mail) => {
      const agent = agents.find((a) => a.id === mail.toAgent);
      if (!agent?.enabled) {
        await transitionMail(env, workspaceId, mail.id, {
          from: ["pending"],
          to: "failed",
          set: { last_error: `agent '${mail.toAgent}' is missing or disabled`, completed_at: now },
          event: "failed",
          now,
        });
        return;
      }
      await startMail(env, workspaceId, mail, agent.model, now, agent.skills ?? []);
    }),
  );
}

/** Mail as a task type the cron dispatches (registered in src/app/tasks.ts). */
export const mailTaskType: TaskType = {
  name: "mail",
  openWorkspaces: (env) => workspacesWithOpenMail(env),
  dispatch: dispatchMail,
};
