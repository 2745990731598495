/// <reference types="vite/client" />
/**
 * The README and the docs pages stay true to the API: every curl command in them (read by
 * test/support/doc-commands.ts) calls a route that exists with that method, sends a body its schema
 * takes (documented fields only, required ones present), and carries the auth it needs — a Beaver
 * bearer token except on the public routes, a Gitea token or the user's password for Gitea. Calls to
 * Gitea are checked against Gitea's own API description (test/fixtures/upstream/gitea).
 */
import { describe, expect, it } from "vitest";
import readme from "../../../README.md?raw";
import examples from "../../../docs/examples.md?raw";
import gitea from "../../../docs/gitea.md?raw";
import deployment from "../../../docs/deployment.md?raw";
import openaiApi from "../../../docs/openai-api.md?raw";
import { call, json } from "../../support/api.ts";
import { curlCommands, shellCommands, type CurlCommand } from "../../support/doc-commands.ts";
import { GITEA_SWAGGER } from "../../support/swagger.ts";
import { checkAgainstSwagger } from "../../support/swagger-check.ts";

const VARS = {
  BEAVER: "http://localhost:8787",
  URL: "https://beaver.example.workers.dev",
  GITEA: "https://gitea.example.com",
  OWNER: "acme",
  REPO: "website",
  SID: "ses_example",
};
const PAGES: Record<string, string> = {
  "README.md": readme,
  "docs/examples.md": examples,
  "docs/gitea.md": gitea,
  "docs/deployment.md": deployment,
  "docs/openai-api.md": openaiApi,
};

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
}
interface OpenApi {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>;
  components: { schemas: Record<string, Schema> };
}

function resolve(doc: OpenApi, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = doc.components.schemas[s.$ref.replace("#/components/schemas/", "")];
  return s;
}

/** Fields a body sends that its schema does not take, and required ones it leaves out (objects, recursively). */
function bodyProblems(doc: OpenApi, schema: Schema | undefined, value: unknown, where: string): string[] {
  const s = resolve(doc, schema);
  if (!s || typeof value !== "object" || value === null || Array.isArray(value)) return [];
  const problems: string[] = [];
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const prop = s.properties?.[key];
    if (prop) problems.push(...bodyProblems(doc, prop, obj[key], `${where}.${key}`));
    else if (s.additionalProperties === false) problems.push(`${where}.${key}: not a documented field`);
  }
  for (const key of s.required ?? []) if (!(key in obj)) problems.push(`${where}.${key}: required field missing`);
  return problems;
}

function templateOf(doc: OpenApi, path: string): string | null {
  for (const template of Object.keys(doc.paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    if (re.test(path)) return template;
  }
  return null;
}

const PUBLIC = [/^\/api\/ping$/, /^\/api\/openapi\.json$/, /^\/webhooks\//];

function beaverProblems(doc: OpenApi, cmd: CurlCommand): string[] {
  const url = new URL(cmd.url.startsWith("http") ? cmd.url : `http://${cmd.url}`);
  const template = templateOf(doc, url.pathname);
  if (!template) return [`${cmd.where}: ${cmd.method} ${url.pathname}: no such route`];
  const operation = doc.paths[template]![cmd.method.toLowerCase()];
  if (!operation) return [`${cmd.where}: ${cmd.method} ${template}: the route does not take ${cmd.method}`];
  const problems: string[] = [];
  const authed = cmd.headers.some((h) => /^Authorization: Bearer \S+/i.test(h)) || url.searchParams.has("ticket");
  if (!authed && !PUBLIC.some((re) => re.test(url.pathname)))
    problems.push(`${cmd.where}: ${cmd.method} ${template} without a bearer token`);
  if (cmd.body !== null && !cmd.body.startsWith("@")) {
    if (!cmd.headers.some((h) => /^content-type: application\/json/i.test(h)))
      problems.push(`${cmd.where}: a JSON body without its content type`);
    let body: unknown;
    try {
      body = JSON.parse(cmd.body);
    } catch {
      return [...problems, `${cmd.where}: the body is not JSON: ${cmd.body}`];
    }
    const schema = operation.requestBody?.content["application/json"]?.schema;
    if (!schema) problems.push(`${cmd.where}: ${cmd.method} ${template} takes no JSON body`);
    else problems.push(...bodyProblems(doc, schema, body, `${cmd.where}: ${cmd.method} ${template} body`));
  }
  return problems;
}

function giteaProblems(cmd: CurlCommand): string[] {
  const url = new URL(cmd.url);
  const problems: string[] = [];
  if (!cmd.headers.some((h) => /^Authorization: (token|Basic) \S+/i.test(h))) problems.push(`${cmd.where}: a Gitea call without auth`);
  const body = cmd.body === null ? null : (JSON.parse(cmd.body) as unknown);
  const query = Object.fromEntries(url.searchParams);
  return [
    ...problems,
    ...checkAgainstSwagger(GITEA_SWAGGER, { method: cmd.method, path: url.pathname, query, body }).map((p) => `${cmd.where}: ${p}`),
  ];
}

function allCurls(): CurlCommand[] {
  return Object.entries(PAGES).flatMap(([file, text]) => curlCommands(file, text, VARS));
}

describe("the commands in the README and the docs", () => {
  it("reads shell as written: continuations, quotes across lines, variables between quotes, substitutions", () => {
    const text = `X=$(curl -s -X POST $BEAVER/api/sessions -H "Authorization: Bearer $TOKEN" | node -pe 'x') # comment\ncurl -X PUT $GITEA/api/v1/a \\\n  -d '{"a":"'$OWNER'",\n "b":1}'`;
    expect(shellCommands(text).map((c) => c.words[0])).toEqual(["X=", "curl", "node", "curl"]);
    const found = curlCommands("t.md", "```sh\n" + text + "\n```\n", VARS);
    expect(found.map((c) => [c.method, c.url, c.body])).toEqual([
      ["POST", "http://localhost:8787/api/sessions", null],
      ["PUT", "https://gitea.example.com/api/v1/a", '{"a":"acme",\n "b":1}'],
    ]);
  });

  it("the check finds a wrong route, method, body field and a missing token", async () => {
    const doc = await json<OpenApi>(await call("GET", "/api/openapi.json", { token: null }));
    const bad =
      "```sh\ncurl -X POST localhost:8787/api/nowhere\ncurl -X DELETE localhost:8787/api/ping\n" +
      "curl -X POST localhost:8787/api/chat -H 'Authorization: Bearer t' -H 'content-type: application/json' -d '{\"mesage\":\"hi\"}'\n" +
      "curl localhost:8787/api/sessions\n```\n";
    const problems = curlCommands("bad.md", bad, VARS).flatMap((c) => beaverProblems(doc, c));
    expect(problems.join("\n")).toMatch(
      /no such route[\s\S]*does not take DELETE[\s\S]*mesage: not a documented field[\s\S]*message: required field missing[\s\S]*without a bearer token/,
    );
    expect(
      giteaProblems(curlCommands("g.md", "```sh\ncurl -X POST https://gitea.example.com/api/v1/repos/a/b/hookz -d '{}'\n```\n", VARS)[0]!),
    ).toHaveLength(2);
  });

  it("call Beaver's routes with the right method, body and token, and Gitea's API as Gitea describes it", async () => {
    const doc = await json<OpenApi>(await call("GET", "/api/openapi.json", { token: null }));
    const curls = allCurls();
    expect(curls.length).toBeGreaterThan(25);
    const problems = curls.flatMap((cmd) => (cmd.url.startsWith(VARS.GITEA) ? giteaProblems(cmd) : beaverProblems(doc, cmd)));
    expect(problems).toEqual([]);
  });
});
