/** `mail_reply`: the recipient of a mail answers it (the proof a `request` needs). */
import { z } from "zod";
import { defineTool, fail, ok, type ToolSpec } from "../../runtime/index.ts";
import { loadMail, sendMail } from "./store.ts";

export const mailReplyTool = defineTool({
  name: "mail_reply",
  outward: true,
  description: "Reply to the mail you are reading (a request expects exactly this).",
  input: z.strictObject({ body: z.string().trim().min(1).max(20_000) }),
  async execute({ body }, ctx) {
    const mailId = ctx.data.mail_id;
    if (typeof mailId !== "string") return fail("no_mail", "This run is not a mail run (no mail_id)");
    const mail = await loadMail(ctx.env, ctx.workspaceId, mailId);
    if (!mail) return fail("no_mail", `Mail ${mailId} not found`);
    const reply = await sendMail(ctx.env, ctx.workspaceId, {
      fromAgent: mail.toAgent,
      toAgent: mail.fromAgent,
      performative: "inform",
      subject: mail.subject.startsWith("Re: ") ? mail.subject : `Re: ${mail.subject}`,
      body,
      inReplyTo: mail.id,
    });
    return ok(`Reply ${reply.id} sent to ${mail.fromAgent}.`);
  },
});

/** The tools a mail run adds to the builtins (registered as the `mail` tool set in src/app/runtime.ts). */
export function mailTools(): ToolSpec<unknown>[] {
  return [mailReplyTool];
}
