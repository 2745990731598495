/**
 * The mail task handler: an `inform` mail is done once its recipient has read it (its run ended);
 * a `request` is done only when the recipient replied. Its texts are in ./prompt-texts.ts.
 */
import { fill, type TaskHandler, type VerifyResult } from "../tasks/handler.ts";
import { MAIL_TEXTS } from "./prompt-texts.ts";
import type { MailTask } from "./store.ts";

export interface MailEvidence {
  replies: number;
}

export function verifyMail(mail: Pick<MailTask, "performative">, evidence: MailEvidence): VerifyResult {
  if (mail.performative === "inform") return { passed: true, reason: "auto_pass", detail: "inform mail needs no reply" };
  if (evidence.replies > 0) return { passed: true, reason: "has_comment", detail: `${evidence.replies} reply(ies)` };
  return { passed: false, reason: "no_action", detail: "the request has no reply" };
}

export function mailSystemPrompt(mail: MailTask): string {
  const vars = { mail_id: mail.id, from_agent: mail.fromAgent, subject: mail.subject, body: mail.body };
  const inform = mail.performative === "inform";
  return [
    fill(inform ? MAIL_TEXTS.informHeader : MAIL_TEXTS.requestHeader, vars),
    "",
    fill(inform ? MAIL_TEXTS.informRule : MAIL_TEXTS.requestRule, vars),
    "",
    fill(MAIL_TEXTS.content, vars),
  ].join("\n");
}

export const mailHandler: TaskHandler<MailTask, MailEvidence> = {
  type: "mail",
  systemPrompt: mailSystemPrompt,
  runContent: (mail) => fill(MAIL_TEXTS.runContent, { mail_id: mail.id, from_agent: mail.fromAgent, subject: mail.subject }),
  verify: verifyMail,
};
