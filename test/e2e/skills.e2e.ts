/**
 * Skills and plugins on a real `wrangler dev`: archive uploads through the real HTTP stack, R2 and
 * D1 as wrangler runs them, a plugin source fetched from a Gitea-shaped HTTP server this test
 * starts on loopback (its archive endpoint is Gitea 1.22's `repoGetArchive`), and skills reaching a
 * run (docs/skills-and-plugins.md, "Skills in a run") as the scripted OpenAI-compatible model
 * received them.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createServer, type Server } from "node:http";
import { packTar } from "modern-tar";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient, type RecordedRequest } from "../support/scripted-openai.ts";
import { zip } from "../fixtures/skills/archives.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

const skillMd = (name: string, d: string) => `---\nname: ${name}\ndescription: ${d}\n---\n\n# ${name}\n`;

async function tarGz(files: Record<string, string>, modes: Record<string, number> = {}): Promise<Uint8Array> {
  const tar = await packTar(
    Object.entries(files).map(([name, body]) => ({
      header: { name, size: new TextEncoder().encode(body).byteLength, mode: modes[name] ?? 0o644 },
      body,
    })),
  );
  return new Uint8Array(await new Response(new Blob([tar]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

async function putArchive(path: string, token: string, bytes: Uint8Array) {
  const res = await fetch(`${baseUrl()}${path}`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/gzip" },
    body: bytes,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

let gitea: Server;
let giteaUrl = "";
const giteaRequests: { url: string; auth: string | undefined }[] = [];
let archive: Uint8Array = new Uint8Array(0);

beforeAll(async () => {
  gitea = createServer((req, res) => {
    giteaRequests.push({ url: req.url ?? "", auth: req.headers.authorization });
    if (req.url === "/api/v1/repos/acme/skills/archive/main.tar.gz" && req.headers.authorization === "token e2e-gitea-token") {
      res.writeHead(200, { "Content-Type": "application/octet-stream" });
      res.end(Buffer.from(archive));
    } else {
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end('{"message":"not found"}');
    }
  });
  await new Promise<void>((ok) => gitea.listen(0, "127.0.0.1", () => ok()));
  const addr = gitea.address();
  giteaUrl = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
});

afterAll(async () => {
  await new Promise((ok) => gitea.close(ok));
});

describe("wrangler dev: skills and plugins", () => {
  it("uploads a skill archive, serves its files, and mirrors a plugin with no R2 writes on an unchanged re-sync", async () => {
    const { token } = await newWorkspace();
    const skill = await putArchive(
      "/api/skills/e2e-notes/upload",
      token,
      await tarGz(
        { "e2e-notes/SKILL.md": skillMd("e2e-notes", "Notes."), "e2e-notes/run.sh": "#!/bin/sh\necho ok\n" },
        { "e2e-notes/run.sh": 0o755 },
      ),
    );
    expect(skill).toMatchObject({ status: 200, body: { version: "v0001", created: true } });
    const file = await api("GET", "/api/skills/e2e-notes/versions/v0001/file?path=run.sh", { token });
    expect(file.headers.get("X-Beaver-Executable")).toBe("true");
    expect(await file.text()).toBe("#!/bin/sh\necho ok\n");
    // A zip through the bundle's zip.js reader (storage/archive/zip-reader-lib.ts): mode bits kept.
    const zipped = await putArchive(
      "/api/skills/e2e-zipped/upload",
      token,
      await zip([
        { name: "e2e-zipped/SKILL.md", data: skillMd("e2e-zipped", "Zipped.") },
        { name: "e2e-zipped/run.sh", data: "echo zipped\n", executable: true },
      ]),
    );
    expect(zipped).toMatchObject({ status: 200, body: { version: "v0001", created: true } });
    const zippedFile = await api("GET", "/api/skills/e2e-zipped/versions/v0001/file?path=run.sh", { token });
    expect(zippedFile.headers.get("X-Beaver-Executable")).toBe("true");
    expect(await zippedFile.text()).toBe("echo zipped\n");

    const pkg = await tarGz({
      "beaver.plugin.json": JSON.stringify({
        schema_version: 1,
        id: "e2e-kit",
        name: "E2E",
        version: "1.0.0",
        skills: [{ name: "e2e-drawer", path: "skills/e2e-drawer" }],
      }),
      "skills/e2e-drawer/SKILL.md": skillMd("e2e-drawer", "Draws."),
    });
    expect((await putArchive("/api/plugins/packages", token, pkg)).body).toMatchObject({ r2_writes: 2 });
    const enable = (await (await api("POST", "/api/plugins/e2e-kit/enable", { token })).json()) as Record<string, unknown>;
    expect(enable).toMatchObject({ mirrored: [{ skill: "e2e-drawer", version: "v0001" }], r2_writes: 0 });
    expect((await putArchive("/api/plugins/packages", token, pkg)).body).toMatchObject({ r2_writes: 0, blobs_written: 0 });
    expect(await (await api("POST", "/api/plugins/sync", { token })).json()).toMatchObject({
      r2_writes: 0,
      plugins: [{ skills: [{ action: "none" }] }],
    });
  });

  it("fetches a plugin source from a Gitea archive endpoint with the workspace's token", async () => {
    const { token } = await newWorkspace();
    archive = await tarGz({
      "skills/beaver.plugin.json": JSON.stringify({
        schema_version: 1,
        id: "remote-kit",
        name: "Remote",
        version: "2.0.0",
        skills: [{ name: "remote-skill", path: "skills/remote-skill" }],
      }),
      "skills/skills/remote-skill/SKILL.md": skillMd("remote-skill", "From Gitea."),
    });
    expect(
      (await api("PUT", "/api/config", { token, body: { toolchain: { gitea_base_url: giteaUrl, gitea_token_secret: "E2E_GITEA" } } }))
        .status,
    ).toBe(200);
    expect((await api("PUT", "/api/secrets/E2E_GITEA", { token, body: { value: "e2e-gitea-token" } })).status).toBe(200);
    expect((await api("PUT", "/api/plugins/sources/acme", { token, body: { owner: "acme", repo: "skills" } })).status).toBe(200);
    const fetched = await api("POST", "/api/plugins/sources/acme/fetch", { token });
    expect(await fetched.json()).toMatchObject({ outcome: "recorded", recorded: [{ id: "remote-kit", package_status: "present" }] });
    expect(giteaRequests.at(-1)).toEqual({ url: "/api/v1/repos/acme/skills/archive/main.tar.gz", auth: "token e2e-gitea-token" });
    const en = await api("POST", "/api/plugins/remote-kit/enable", { token });
    expect(await en.json()).toMatchObject({ mirrored: [{ skill: "remote-skill", version: "v0001" }] });
  });

  it("activates a skill the message needs: its body in a skill message, scores in the hidden event; skill_view reads its files", async () => {
    const { token } = await newWorkspace();
    const model = `echo:skills-${Date.now()}`;
    const config = { model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` } };
    expect((await api("PUT", "/api/config", { token, body: config })).status).toBe(200);
    const panel = "## Panel {{n}}\n\nÜberschrift — ✓\ttab  \n\nno final newline";
    const body = "# Comic steps\n\nMARKER-E2E-COMIC: sketch four panels, then ink them. Use templates/panel.md.\n";
    const put = await api("PUT", "/api/skills/comic-toolkit", {
      token,
      body: {
        files: [
          {
            path: "SKILL.md",
            content: `---\nname: comic-toolkit\ndescription: Draws four-panel comics from a short script. Use when asked for a comic strip.\n---\n\n${body}`,
          },
          { path: "templates/panel.md", content: panel },
        ],
      },
    });
    expect(put.status).toBe(200);
    const created = await api("POST", "/api/sessions", { token, body: {} });
    const sid = ((await created.json()) as { id: string }).id;
    const send = async (content: string) => {
      const res = await api("POST", `/api/sessions/${sid}/messages?wait=true`, { token, body: { content } });
      expect(res.status).toBe(200);
      const run = (await res.json()) as { run_id: string; status: string };
      expect(run.status).toBe("completed");
      return run.run_id;
    };
    const systemOf = (r: RecordedRequest | undefined) => {
      const first = r?.body.messages[0];
      return first?.role === "system" && typeof first.content === "string" ? first.content : "";
    };
    /** The user messages' texts as sent (skill messages are user messages wrapped as system reminders). */
    const usersOf = (r: RecordedRequest | undefined) =>
      (r?.body.messages ?? []).flatMap((m) =>
        m.role === "user" ? [typeof m.content === "string" ? m.content : JSON.stringify(m.content)] : [],
      );
    interface Activation {
      type: string;
      run_id: string;
      skills: { name: string; version: string; reason: string; scores: { bm25?: number; bm25_relative?: number } }[];
      candidates: { name: string; scores: { bm25?: number } }[];
      rationale: string;
    }
    const activationOf = async (runId: string): Promise<Activation | undefined> => {
      const res = await api("GET", `/api/sessions/${sid}/events?include_hidden=true&limit=1000`, { token });
      expect(res.status).toBe(200);
      const { events } = (await res.json()) as { events: Activation[] };
      return events.find((e) => e.type === "skill_activation_snapshotted" && e.run_id === runId);
    };

    // A message that plainly needs the skill.
    const first = await send("Please draw me a comic strip about two cats");
    const [req1] = await models.requests(model);
    // The body is a skill message right before the user's (docs/agent-loop.md, "Skill messages"), not the system prompt.
    expect(systemOf(req1)).not.toContain("MARKER-E2E-COMIC");
    expect(usersOf(req1)).toEqual([expect.stringContaining("MARKER-E2E-COMIC"), "Please draw me a comic strip about two cats"]);
    const a1 = await activationOf(first);
    expect(a1?.skills.map((s) => [s.name, s.version, s.reason])).toEqual([["comic-toolkit", "v0001", "bm25_threshold"]]);
    expect(a1?.skills[0]?.scores.bm25).toBeGreaterThan(0);
    expect(a1?.skills[0]?.scores.bm25_relative).toBe(1);
    expect(a1?.candidates[0]?.name).toBe("comic-toolkit");

    // A message matching nothing activates none; the skill is still listed in the catalog.
    const second = await send("What time is it in Berlin?");
    const req2 = (await models.requests(model))[1];
    expect(systemOf(req2)).not.toContain("MARKER-E2E-COMIC");
    expect(systemOf(req2)).toContain("- comic-toolkit:");
    expect(usersOf(req2).join("")).not.toContain("MARKER-E2E-COMIC");
    expect(await activationOf(second)).toBeUndefined();

    // The model reads a supporting file with skill_view: the exact text comes back.
    await models.script(model, [
      { tool_calls: [{ name: "skill_view", arguments: { name: "comic-toolkit", path: "templates/panel.md" } }] },
      { text: "read it" },
    ]);
    const third = await send("Show me the panel template of the comic toolkit");
    const res = await api("GET", `/api/sessions/${sid}/runs/${third}/events?limit=1000`, { token });
    expect(res.status).toBe(200);
    const { events } = (await res.json()) as {
      events: { type: string; message?: { role: string; content?: unknown; is_error?: boolean } }[];
    };
    const results = events.filter((e) => e.type === "message" && e.message?.role === "tool_result").map((e) => e.message);
    expect(results).toEqual([expect.objectContaining({ is_error: false, content: panel })]);
    const toolMessage = (await models.requests(model))[3]?.body.messages.find((m) => m.role === "tool");
    expect(JSON.stringify(toolMessage?.content)).toContain(JSON.stringify(panel).slice(1, -1));
  });
});
