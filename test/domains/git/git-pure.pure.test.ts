// The pure parts of `git` in the workspace (docs/workspace.md, "Git"): the clone's response cap, the
// symbolic-link rule, and git's status letters.
import { describe, expect, it } from "vitest";
import { gitHttp, GitTooLargeError } from "../../../src/domains/git/http.ts";
import { linkStaysInside } from "../../../src/domains/git/fs.ts";
import { shortStatus } from "../../../src/domains/git/format.ts";
import { giteaRepoOf } from "../../../src/domains/toolchain/git-host.ts";
import { headVerdict } from "../../../src/domains/toolchain/pushes.ts";

async function drain(body: AsyncIterableIterator<Uint8Array> | undefined): Promise<number> {
  let n = 0;
  for await (const part of body ?? []) n += part.byteLength;
  return n;
}

describe("git over HTTP", () => {
  it("stops a response over the clone limit before it is all read, and adds credentials only where they belong", async () => {
    const seen: { url: string; auth: string | null }[] = [];
    const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push({ url: String(input), auth: new Headers(init?.headers).get("authorization") });
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= 10) return c.close();
          sent++;
          c.enqueue(new Uint8Array(1000));
        },
      });
      return new Response(stream, { status: 200 });
    };
    const http = gitHttp({
      fetch,
      credentials: async (url) => (url.host === "gitea.test" ? { Authorization: "Basic secret" } : null),
      maxResponseBytes: 4500,
    });
    const res = await http.request({ url: "https://gitea.test/o/r.git/info/refs?service=git-upload-pack", method: "GET", headers: {} });
    await expect(drain(res.body)).rejects.toBeInstanceOf(GitTooLargeError);
    const small = gitHttp({ fetch, credentials: async () => null, maxResponseBytes: 20_000 });
    expect(await drain((await small.request({ url: "https://other.test/x.git/info/refs", headers: {} })).body)).toBe(10_000);
    expect(seen).toEqual([
      { url: "https://gitea.test/o/r.git/info/refs?service=git-upload-pack", auth: "Basic secret" },
      { url: "https://other.test/x.git/info/refs", auth: null },
    ]);
  });

  it("knows a Gitea clone URL's repository, and only on the configured Gitea", () => {
    const base = new URL("https://git.example.com/gitea/");
    expect(giteaRepoOf("https://git.example.com/gitea/owner/repo.git", base)).toBe("owner/repo");
    expect(giteaRepoOf("https://git.example.com/gitea/owner/repo", base)).toBe("owner/repo");
    expect(giteaRepoOf("https://git.example.com/owner/repo.git", base)).toBeNull();
    expect(giteaRepoOf("https://evil.example.com/gitea/owner/repo.git", base)).toBeNull();
    expect(giteaRepoOf("https://git.example.com/gitea/owner/repo/extra.git", base)).toBeNull();
  });
});

describe("symbolic links in a checkout", () => {
  it("allows a link that stays inside the repository, refuses absolute ones and ones that climb out", () => {
    expect(linkStaysInside("/repo/docs/a.md", "../README.md", "/repo")).toBe(true);
    expect(linkStaysInside("/repo/a", "b/c", "/repo")).toBe(true);
    expect(linkStaysInside("/repo/docs/a", "../../etc/passwd", "/repo")).toBe(false);
    expect(linkStaysInside("/repo/a", "/etc/passwd", "/repo")).toBe(false);
    expect(linkStaysInside("/repo/a", "..", "/repo")).toBe(false);
    expect(linkStaysInside("/a", "b", "/")).toBe(true);
    expect(linkStaysInside("/a", "../b", "/")).toBe(false);
  });
});

describe("git status --short", () => {
  it("prints git's two letters per path, tracked changes before untracked files", () => {
    const rows: [string, number, number, number][] = [
      ["added.ts", 0, 2, 2],
      ["both.ts", 1, 2, 3],
      ["deleted.ts", 1, 0, 1],
      ["new.ts", 0, 2, 0],
      ["same.ts", 1, 1, 1],
      ["staged-rm.ts", 1, 0, 0],
      ["untracked-again.ts", 1, 2, 0],
    ];
    expect(shortStatus(rows, "main")).toBe(
      "## main\nA  added.ts\nMM both.ts\n D deleted.ts\nD  staged-rm.ts\nD  untracked-again.ts\n?? new.ts\n?? untracked-again.ts\n",
    );
  });
});

describe("the pushed head check of a code scenario", () => {
  it("passes when every pushed branch has a commit this task pushed at its head, and says which one does not", () => {
    const commits = new Set(["a".repeat(40), "b".repeat(40)]);
    expect(headVerdict([{ repo: "o/r", branch: "fix/1-x", commits, head: "b".repeat(40) }])).toEqual({
      passed: true,
      detail: "1 pushed branch head(s) verified",
    });
    expect(headVerdict([{ repo: "o/r", branch: "fix/1-x", commits, head: "c".repeat(40) }])).toEqual({
      passed: false,
      detail: `the head of o/r fix/1-x is ${"c".repeat(12)}, not a commit this task pushed (${"a".repeat(12)}, ${"b".repeat(12)})`,
    });
    expect(headVerdict([{ repo: "o/r", branch: "gone", commits, head: null }]).detail).toBe(
      "branch gone of o/r, which this task pushed, no longer exists",
    );
  });
});
