/** The texts a mail recipient reads; `{name}` placeholders are filled by `fill()` (src/domains/tasks/handler.ts). */

/** Mail prompts (inform: read only; request: a reply is expected). */
export const MAIL_TEXTS = {
  informHeader: "## Mail {mail_id} from {from_agent} (inform)",
  informRule: "This mail informs you; no reply and no action are needed. Read it and take it into account in your work.",
  requestHeader: "## Mail {mail_id} from {from_agent} (request)",
  requestRule:
    "This mail asks something of you and a reply is expected. Do what it asks if it is yours to do, then answer with mail_reply (mail id {mail_id}). Without a reply the mail counts as unanswered and fails.",
  content: "Subject: {subject}\n\n{body}",
  runContent: "Read mail {mail_id} from {from_agent}: {subject}",
};
