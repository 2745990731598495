/** Mail between agents: its own API, store and handler; inform is read, request needs a reply. */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json } from "../../support/api.ts";
import { dispatchMail } from "../../../src/domains/mail/dispatcher.ts";
import { sendMail } from "../../../src/domains/mail/store.ts";
import { ScriptedModel, registerModel, text, toolCalls } from "../../support/sessions.ts";
import { listTasks, toolchainWorkspace } from "../../support/toolchain-setup.ts";

type Mail = {
  id: string;
  status: string;
  performative: string;
  from_agent: string;
  to_agent: string;
  in_reply_to: string | null;
  subject: string;
  last_error: string | null;
};
type Err = { error: { code: string; details?: { path: string }[] } };

async function useModel(ws: { admin: string }, agentId: string, scripted: ScriptedModel) {
  const id = registerModel(scripted);
  await call("PATCH", `/api/agents/${agentId}`, {
    token: ws.admin,
    body: { model: { provider: "openai-compatible", id, base_url: "http://scripted.test/v1" } },
  });
}

async function send(token: string, body: Record<string, unknown>) {
  const res = await call("POST", "/api/mail", { token, body });
  return { status: res.status, mail: (await json(res)) as unknown as Mail };
}

async function get(token: string, id: string) {
  return json<{ mail: Mail; replies: Mail[]; history: { event: string }[] }>(await call("GET", `/api/mail/${id}`, { token }));
}

describe("/api/mail", () => {
  it("sends, lists, filters and reads mail; validates agents and bodies", async () => {
    const ws = await toolchainWorkspace();
    const sent = await send(ws.member, {
      from_agent: "boss",
      to_agent: "jony",
      performative: "request",
      subject: "Status?",
      body: "Where are we on #13?",
    });
    expect(sent.status).toBe(201);
    expect(sent.mail).toMatchObject({ status: "pending", performative: "request", from_agent: "boss", to_agent: "jony" });
    await send(ws.member, { from_agent: "jony", to_agent: "nice", performative: "inform", subject: "FYI", body: "I rebased #7." });
    const list = await json<{ mail: Mail[] }>(await call("GET", "/api/mail?to_agent=jony", { token: ws.read }));
    expect(list.mail.map((m) => m.subject)).toEqual(["Status?"]);
    expect((await json<{ mail: Mail[] }>(await call("GET", "/api/mail?performative=inform", { token: ws.read }))).mail).toHaveLength(1);

    const unknown = await send(ws.member, { from_agent: "boss", to_agent: "ghost", performative: "inform", subject: "x", body: "y" });
    expect(unknown.status).toBe(422);
    const badType = await call("POST", "/api/mail", {
      token: ws.member,
      body: { from_agent: "boss", to_agent: "jony", performative: "order", subject: "x", body: "y" },
    });
    expect((await json<Err>(badType)).error.details?.[0]?.path).toBe("performative");
    expect(
      (
        await call("POST", "/api/mail", {
          token: ws.read,
          body: { from_agent: "boss", to_agent: "jony", performative: "inform", subject: "x", body: "y" },
        })
      ).status,
    ).toBe(403);
    const other = await toolchainWorkspace();
    expect((await call("GET", `/api/mail/${sent.mail.id}`, { token: other.read })).status).toBe(404);
    expect((await call("POST", `/api/mail/${sent.mail.id}/reply`, { token: other.member, body: { body: "hi" } })).status).toBe(404);
    // Mail never shows up as toolchain work.
    expect(await listTasks(ws.read)).toEqual([]);
  });

  it("pages through mail sent in the same millisecond without losing any", async () => {
    const ws = await toolchainWorkspace();
    const now = Date.now();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++)
      sent.push(
        (await sendMail(env, ws.id, { fromAgent: "boss", toAgent: "jony", performative: "inform", subject: `FYI ${i}`, body: "x" }, now))
          .id,
      );
    const seen: string[] = [];
    let cursor = "";
    for (let guard = 0; guard < 10; guard++) {
      const page = await json<{ mail: Mail[]; next_before: number | null; next_before_id: string | null }>(
        await call("GET", `/api/mail?limit=2${cursor}`, { token: ws.read }),
      );
      seen.push(...page.mail.map((m) => m.id));
      if (page.next_before === null) break;
      cursor = `&before=${page.next_before}&before_id=${page.next_before_id}`;
    }
    expect(seen.sort()).toEqual(sent.sort());
  });

  it("a reply through the API answers the request, and cancel stops open mail", async () => {
    const ws = await toolchainWorkspace();
    const { mail } = await send(ws.member, {
      from_agent: "boss",
      to_agent: "jony",
      performative: "request",
      subject: "Status?",
      body: "?",
    });
    const reply = await call("POST", `/api/mail/${mail.id}/reply`, { token: ws.member, body: { body: "Almost done." } });
    expect(reply.status).toBe(201);
    expect(await json(reply)).toMatchObject({
      from_agent: "jony",
      to_agent: "boss",
      in_reply_to: mail.id,
      subject: "Re: Status?",
      performative: "inform",
    });
    expect((await get(ws.read, mail.id)).replies).toHaveLength(1);
    expect((await call("POST", `/api/mail/${mail.id}/cancel`, { token: ws.member })).status).toBe(200);
    expect((await call("POST", `/api/mail/${mail.id}/cancel`, { token: ws.member })).status).toBe(409);
  });
});

describe("mail runs", () => {
  it("a request is done once the recipient replies with mail_reply; the reply informs the sender", async () => {
    const ws = await toolchainWorkspace();
    const jony = new ScriptedModel([
      toolCalls({ id: "m1", name: "mail_reply", args: { body: "Issue #13 is in review as PR #14." } }),
      text("Replied."),
    ]);
    await useModel(ws, "jony", jony);
    await useModel(ws, "boss", new ScriptedModel([text("Thanks.")]));
    const { mail } = await send(ws.member, {
      from_agent: "boss",
      to_agent: "jony",
      performative: "request",
      subject: "Status?",
      body: "Where are we on #13?",
    });
    await dispatchMail(env, ws.id);
    const done = await get(ws.read, mail.id);
    expect(done.mail.status).toBe("done");
    expect(done.replies).toMatchObject([{ from_agent: "jony", to_agent: "boss", performative: "inform" }]);
    expect(done.history.map((h) => h.event)).toEqual(["sent", "claimed", "run_started", "verified"]);
    expect(jony.promptText(0)).toContain("a reply is expected");
    // A mail run gets the reply tool and none of the toolchain's report or Gitea tools.
    const offered = (jony.calls[0]?.tools ?? []).map((t) => t.name);
    expect(offered).toContain("mail_reply");
    expect(offered.filter((n) => n.startsWith("gitea_") || n.startsWith("toolchain_"))).toEqual([]);
    // The reply (inform) is read by boss in its own run, and is done without any reply.
    await dispatchMail(env, ws.id);
    expect((await get(ws.read, done.replies[0]!.id)).mail.status).toBe("done");
  });

  it("an inform is done when read; an unanswered request is retried once, then fails", async () => {
    const ws = await toolchainWorkspace();
    const jony = new ScriptedModel([text("Read it.")]);
    await useModel(ws, "jony", jony);
    const inform = (
      await send(ws.member, { from_agent: "boss", to_agent: "jony", performative: "inform", subject: "FYI", body: "Release on Friday." })
    ).mail;
    const request = (
      await send(ws.member, { from_agent: "boss", to_agent: "jony", performative: "request", subject: "Need", body: "Please confirm." })
    ).mail;
    await dispatchMail(env, ws.id);
    expect((await get(ws.read, inform.id)).mail.status).toBe("done");
    expect(jony.promptText(0) + jony.promptText(1)).toContain("no reply and no action are needed");
    expect((await get(ws.read, request.id)).mail).toMatchObject({ status: "pending", last_error: "the request has no reply" });
    await dispatchMail(env, ws.id);
    const failed = await get(ws.read, request.id);
    expect(failed.mail.status).toBe("failed");
    expect(failed.history.map((h) => h.event)).toEqual([
      "sent",
      "claimed",
      "run_started",
      "retry_scheduled",
      "claimed",
      "run_started",
      "failed",
    ]);
  });
});
