/**
 * Shorthands over `SessionClient` (client.ts) for callers that hold an environment and a session id
 * and make one call (the task machinery, schedules, evaluation runs, tests): each is one client call,
 * so the protocol stays in the client.
 */
import type { Env } from "../../storage/env.ts";
import type { SubmitRunInput } from "./contract.ts";
import { SessionClient, type CreateSessionInput, type SessionResult } from "./client.ts";

export { MAX_MESSAGE_BYTES, messageFingerprint } from "./session-input.ts";
export { sessionNamespace } from "./client.ts";
export type { CreateSessionInput };

/** Creates a session (or returns the existing one with that id in the same workspace; another workspace's → 409). */
export async function createSession(env: Env, input: CreateSessionInput): Promise<SessionResult<"view"> & { created: boolean }> {
  const { client: _client, ...session } = await SessionClient.create(env, input);
  return session;
}

export function getSession(env: Env, workspaceId: string, sessionId: string): Promise<SessionResult<"view">> {
  return SessionClient.of(env, sessionId).view(workspaceId);
}

export function submitRun(env: Env, sessionId: string, input: SubmitRunInput): Promise<SessionResult<"submit">> {
  return SessionClient.of(env, sessionId).submit(input);
}

export function waitForRun(
  env: Env,
  sessionId: string,
  runId: string,
  timeoutMs: number,
  workspaceId?: string,
): Promise<SessionResult<"waitForRun">> {
  return SessionClient.of(env, sessionId).waitForRun(runId, timeoutMs, workspaceId);
}

export function getRun(env: Env, sessionId: string, runId: string, workspaceId?: string): Promise<SessionResult<"getRun">> {
  return SessionClient.of(env, sessionId).getRun(runId, workspaceId);
}

export function cancelRun(env: Env, sessionId: string, workspaceId: string, runId?: string): Promise<SessionResult<"cancel">> {
  return SessionClient.of(env, sessionId).cancel(workspaceId, runId);
}
