/**
 * A skill draft made over HTTP the way production makes one, for e2e tests and benchmarks (Node, any
 * Worker URL): a plugin whose 1.1.0 only changes the skill `greeter` (a fast-forward update) and adds
 * `evals/cases.jsonl` with `n` cases, synced into a `pending_review` draft, in a workspace whose main
 * model is the scripted OpenAI-compatible model `modelId` (test/support/scripted-openai.ts).
 */
import { packTar } from "modern-tar";

export const SKILL = "greeter";

const skillMd = (body: string) => `---\nname: ${SKILL}\ndescription: Greets people by name.\n---\n\n# Greeting\n\n${body}\n`;
const cases = (n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ prompt: `Greet person ${i}`, expect: `names person ${i}` })).join("\n");

async function pluginTarGz(version: string, files: Record<string, string>): Promise<Uint8Array> {
  const all: Record<string, string> = {
    "beaver.plugin.json": JSON.stringify({
      schema_version: 1,
      id: "evalkit",
      name: "Eval kit",
      version,
      skills: [{ name: SKILL, path: `skills/${SKILL}` }],
    }),
    ...Object.fromEntries(Object.entries(files).map(([p, b]) => [`skills/${SKILL}/${p}`, b])),
  };
  const tar = await packTar(
    Object.entries(all).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).byteLength, mode: 0o644 }, body })),
  );
  return new Uint8Array(await new Response(new Blob([tar]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

/** Calls a Worker at `url` (the shared `wrangler dev`, or a private one). */
export async function at(url: string, method: string, path: string, token: string, body?: unknown | Uint8Array): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  let payload: BodyInit | undefined;
  if (body instanceof Uint8Array) {
    headers["Content-Type"] = "application/gzip";
    payload = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  return fetch(`${url}${path}`, { method, headers, body: payload });
}

export async function ok(res: Response, what: string): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** A workspace on the scripted model `modelId` with a pending_review fast-forward draft of `greeter` holding `n` cases. */
export async function draftOn(url: string, token: string, modelUrl: string, modelId: string, n: number): Promise<string> {
  await ok(
    await at(url, "PUT", "/api/config", token, { model: { provider: "openai-compatible", id: modelId, base_url: `${modelUrl}/v1` } }),
    "config",
  );
  await ok(
    await at(url, "PUT", "/api/plugins/packages", token, await pluginTarGz("1.0.0", { "SKILL.md": skillMd("BASELINE: say hello.") })),
    "upload",
  );
  await ok(await at(url, "POST", "/api/plugins/evalkit/enable", token), "enable");
  const v2 = { "SKILL.md": skillMd("CANDIDATE: say hello and use the name."), "evals/cases.jsonl": cases(n) };
  await ok(await at(url, "PUT", "/api/plugins/packages", token, await pluginTarGz("1.1.0", v2)), "upload 1.1.0");
  await ok(await at(url, "POST", "/api/plugins/sync", token), "sync");
  const listed = (await ok(await at(url, "GET", `/api/skills/${SKILL}/candidates`, token), "candidates")) as {
    drafts: { id: string; status: string }[];
  };
  const draft = listed.drafts.find((d) => d.status === "pending_review");
  if (!draft) throw new Error(`no draft: ${JSON.stringify(listed)}`);
  return draft.id;
}
