import { beforeEach, describe, expect, it } from "vitest";
import { GiteaError, giteaClient, kindOfStatus } from "../../../src/domains/gitea/client.ts";
import { FakeGitea } from "../../support/fake-gitea.ts";
import { swaggerProblems } from "../../support/swagger.ts";

let fake: FakeGitea;
const client = (timeoutMs = 2_000) =>
  giteaClient({ baseUrl: "http://gitea.test/", token: "tok-1", timeoutMs, fetch: (input, init) => fake.fetch(input, init) });

beforeEach(() => {
  fake = new FakeGitea();
  fake.addToken("tok-1", "jony");
  fake.addRepo("acme/app", { files: { "README.md": "hello\n", "src/a.ts": "export const a = 1;\n" } });
  fake.addPull("acme/app", { number: 7, author: "jony", headRef: "feat", title: "Feature" });
});

async function failure(p: Promise<unknown>): Promise<GiteaError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof GiteaError) return err;
    throw err;
  }
  throw new Error("expected a GiteaError");
}

describe("Gitea client on gitea-js", () => {
  it("makes real Gitea API calls, with the token, for every operation Beaver uses", async () => {
    const g = client();
    const pr = await g.getPull("acme/app", 7);
    expect(pr).toMatchObject({ number: 7, title: "Feature", head: { ref: "feat" } });
    expect(await g.getPullDiff("acme/app", 7)).toContain("+new from PR 7");
    expect((await g.listPullFiles("acme/app", 7))[0]).toMatchObject({ filename: "README.md" });
    const file = await g.getContents("acme/app", "src/a.ts", "feat");
    expect(Array.isArray(file) ? null : atob(file.content ?? "")).toBe("export const a = 1;\n");
    expect((await g.commitPull("acme/app", pr.head!.sha!)).number).toBe(7);
    await g.comment("acme/app", 7, "hi @a_nice_user");
    await g.submitReview("acme/app", 7, { event: "APPROVED", body: "lgtm" });
    await g.createBranch("acme/app", "fix/1-x", "main");
    await g.changeFiles("acme/app", {
      branch: "fix/1-x",
      message: "fix",
      files: [{ operation: "create", path: "b.ts", content: btoa("b") }],
    });
    const created = await g.createPull("acme/app", { title: "Fix", head: "fix/1-x", base: "main" });
    expect(created.number).toBe(8);
    await g.merge("acme/app", 7, { method: "squash", deleteBranch: true });
    const issue = await g.createIssue("acme/app", { title: "Help", body: "x", assignees: ["boss"] });
    expect(issue.number).toBe(9);

    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /api/v1/repos/acme/app/pulls/7",
      "GET /api/v1/repos/acme/app/pulls/7.diff",
      "GET /api/v1/repos/acme/app/pulls/7/files",
      "GET /api/v1/repos/acme/app/contents/src/a.ts",
      `GET /api/v1/repos/acme/app/commits/${pr.head!.sha}/pull`,
      "POST /api/v1/repos/acme/app/issues/7/comments",
      "POST /api/v1/repos/acme/app/pulls/7/reviews",
      "POST /api/v1/repos/acme/app/branches",
      "POST /api/v1/repos/acme/app/contents",
      "POST /api/v1/repos/acme/app/pulls",
      "POST /api/v1/repos/acme/app/pulls/7/merge",
      "POST /api/v1/repos/acme/app/issues",
    ]);
    expect(swaggerProblems(fake.requests)).toEqual([]);
    expect(fake.requests.every((r) => r.authorization === "Bearer tok-1")).toBe(true);
    expect(fake.requests[3]!.query).toEqual({ ref: "feat" });
    expect(fake.merges).toEqual([{ repo: "acme/app", number: 7, method: "squash" }]);
    expect(fake.reviews[0]).toMatchObject({ event: "APPROVED", author: "jony" });
    expect(fake.issues[0]).toMatchObject({ assignees: ["boss"] });
  });

  it("classifies a 4xx answer as a business error with its status and Gitea's message", async () => {
    const err = await failure(client().getPull("acme/app", 99));
    expect(err).toMatchObject({ kind: "business", status: 404, operation: "GET /repos/acme/app/pulls/99" });
    expect(err.message).toContain("pull request not found");
    const merged = client();
    await merged.merge("acme/app", 7, { method: "merge" });
    expect(await failure(merged.merge("acme/app", 7, { method: "merge" }))).toMatchObject({ kind: "business", status: 405 });
  });

  it("classifies 5xx, a dropped connection and a timeout as infrastructure errors", async () => {
    fake.setDown("503");
    expect(await failure(client().getPull("acme/app", 7))).toMatchObject({ kind: "infrastructure", status: 503 });
    fake.setDown("network");
    const lost = await failure(client().comment("acme/app", 7, "x"));
    expect(lost).toMatchObject({ kind: "infrastructure", status: null, operation: "POST /repos/acme/app/issues/7/comments" });
    fake.setDown(false);
    fake.setDelay(1_000);
    const slow = await failure(client(100).getPull("acme/app", 7));
    expect(slow).toMatchObject({ kind: "infrastructure", status: null });
    expect(slow.message).toContain("timed out after 100 ms");
  });

  it("maps statuses: 4xx business except 408/429, 5xx infrastructure", () => {
    expect([400, 401, 403, 404, 409, 422, 408, 429, 500, 502, 503].map(kindOfStatus)).toEqual([
      "business",
      "business",
      "business",
      "business",
      "business",
      "business",
      "infrastructure",
      "infrastructure",
      "infrastructure",
      "infrastructure",
      "infrastructure",
    ]);
  });
});
