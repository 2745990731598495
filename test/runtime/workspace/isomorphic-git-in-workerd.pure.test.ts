// Evidence for docs/workspace.md ("Git"): isomorphic-git loads and runs in workerd (init, add, commit,
// log, status over an in-memory file system). Git over smart HTTP is not wired up yet; this shows the
// library choice holds before it is.
import { describe, expect, it } from "vitest";
import git from "isomorphic-git";
import { InMemoryFs } from "just-bash/browser";

describe("isomorphic-git in workerd", () => {
  it("init, add, commit, log, status on a memory fs", async () => {
    const mem = new InMemoryFs();
    const fs = {
      promises: {
        readFile: async (p: string, o?: { encoding?: string } | string) => {
          const enc = typeof o === "string" ? o : o?.encoding;
          try {
            return enc ? await mem.readFile(p) : await mem.readFileBuffer(p);
          } catch (e) {
            throw Object.assign(new Error(String(e)), { code: "ENOENT" });
          }
        },
        writeFile: (p: string, d: string | Uint8Array) => mem.writeFile(p, d),
        unlink: (p: string) => mem.rm(p),
        readdir: (p: string) => mem.readdir(p),
        mkdir: async (p: string) => {
          try {
            await mem.mkdir(p);
          } catch (e) {
            const m = String(e);
            throw Object.assign(new Error(m), { code: m.includes("EEXIST") ? "EEXIST" : "ENOENT" });
          }
        },
        rmdir: (p: string) => mem.rm(p, { recursive: true }),
        stat: async (p: string) => {
          try {
            const s = await mem.stat(p);
            return {
              ...s,
              isFile: () => s.isFile,
              isDirectory: () => s.isDirectory,
              isSymbolicLink: () => false,
              mtimeMs: 0,
              ctimeMs: 0,
              mode: s.mode,
              size: s.size,
              ino: 0,
              uid: 0,
              gid: 0,
              dev: 0,
            };
          } catch (e) {
            throw Object.assign(new Error(String(e)), { code: "ENOENT" });
          }
        },
        lstat: async (p: string) => fs.promises.stat(p),
        readlink: async () => {
          throw new Error("no");
        },
        symlink: async () => {
          throw new Error("no");
        },
        chmod: async () => undefined,
      },
    };
    await git.init({ fs, dir: "/r", defaultBranch: "main" });
    await mem.writeFile("/r/a.txt", "hello\n");
    await git.add({ fs, dir: "/r", filepath: "a.txt" });
    const sha = await git.commit({ fs, dir: "/r", message: "first", author: { name: "agent", email: "agent@beaver.test" } });
    const log = await git.log({ fs, dir: "/r" });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(log.map((l) => [l.oid, l.commit.message, l.commit.author.email])).toEqual([[sha, "first\n", "agent@beaver.test"]]);
    expect(await git.statusMatrix({ fs, dir: "/r" })).toEqual([["a.txt", 1, 1, 1]]);
  });
});
