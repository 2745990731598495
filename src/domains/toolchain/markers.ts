/**
 * Hidden markers Beaver puts in the Gitea comments and issues it writes when routing a failure.
 * When such a text comes back as a webhook, the marker says it is Beaver's own notice (so a mention
 * in it is not new work) or that the issue is the supervisor's report of task X (so a failure of
 * the supervisor's task is not routed again — no route recurses).
 */
export const BEAVER_MARKER = "<!-- beaver:";

export type NoticeKind = "business-failure" | "system-failure";

export function noticeMarker(kind: NoticeKind, taskId: string): string {
  return `${BEAVER_MARKER}${kind} task=${taskId} -->`;
}

/** The task a Beaver notice is about, when `text` carries a marker of `kind`. */
export function noticeTaskId(text: string, kind: NoticeKind): string | null {
  const re = new RegExp(`${BEAVER_MARKER.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${kind} task=([A-Za-z0-9_]+) -->`);
  return re.exec(text)?.[1] ?? null;
}
