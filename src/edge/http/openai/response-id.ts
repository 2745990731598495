/**
 * Response ids of `POST /v1/responses` (docs/openai-api.md, "previous_response_id"): a response is one
 * Beaver run, so its id carries the session and the run — `resp_` + base64url("<session id>/<run id>").
 * No table is needed to find the session from `previous_response_id`, and the ids are workspace-scoped
 * because every use goes through the session, which answers 404 to any other workspace.
 */
import { SESSION_ID_PATTERN } from "../../../runtime/index.ts";

const RUN_ID = /^[A-Za-z0-9_-]{1,64}$/;
const PREFIX = "resp_";

const b64url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

export function responseId(sessionId: string, runId: string): string {
  return `${PREFIX}${b64url(`${sessionId}/${runId}`)}`;
}

/** The session and run a response id names, or null when it is not one of ours. */
export function parseResponseId(id: string): { sessionId: string; runId: string } | null {
  if (!id.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(id.slice(PREFIX.length))) return null;
  let text: string;
  try {
    text = atob(id.slice(PREFIX.length).replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null;
  }
  const slash = text.lastIndexOf("/");
  const sessionId = text.slice(0, slash);
  const runId = text.slice(slash + 1);
  if (slash < 0 || !SESSION_ID_PATTERN.test(sessionId) || !RUN_ID.test(runId)) return null;
  return { sessionId, runId };
}
