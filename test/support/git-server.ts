/**
 * A real git server for e2e tests and benchmarks: git's own `git http-backend` (it ships with git) run
 * as CGI behind a small Node HTTP server on loopback, over bare repositories under a temporary folder.
 * Requests that are not git's smart HTTP (the Gitea API) are forwarded to `forward` (the fake Gitea), so
 * one origin serves both, as a real Gitea does, and the workspace's Gitea token goes to both. With
 * `token`, git requests must carry it as HTTP Basic credentials (any user name), as Gitea accepts it.
 * After every push the server tells the fake Gitea the repository's branches (`setBranch`), so a pull
 * request can be opened from a pushed branch.
 */
import { spawn, execFileSync } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const BACKEND = "/usr/lib/git-core/git-http-backend";
const GIT_PATH = /^\/([^/]+)\/([^/]+?\.git)\/(info\/refs|git-upload-pack|git-receive-pack|HEAD)$/;

export interface GitRequest {
  method: string;
  path: string;
  /** The Basic password sent, or null. */
  password: string | null;
}

export interface GitServer {
  url: string;
  root: string;
  requests: GitRequest[];
  /** A bare repository `owner/name` with one commit of `files` on `branch` (a `null` value: a symlink to the text after `->`). */
  createRepo(repo: string, files: Record<string, string>, options?: { branch?: string; symlinks?: Record<string, string> }): string;
  /** Runs git in a bare repository (`git log`, `git show`, …) and returns its stdout. */
  git(repo: string, ...args: string[]): string;
  /** Tells the fake Gitea the repository's branch heads, as Gitea learns of every push (done after each push over HTTP). */
  announce(repo: string): Promise<void>;
  stop(): Promise<void>;
}

const AUTHOR = ["-c", "user.name=Test Author", "-c", "user.email=author@example.test"];

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function basicPassword(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (!h?.startsWith("Basic ")) return null;
  const decoded = Buffer.from(h.slice(6), "base64").toString("utf8");
  return decoded.slice(decoded.indexOf(":") + 1);
}

export async function startGitServer(options: { forward?: string; token?: string } = {}): Promise<GitServer> {
  const root = mkdtempSync(join(tmpdir(), "beaver-git-"));
  const requests: GitRequest[] = [];
  const git = (repo: string, ...args: string[]) =>
    execFileSync("git", ["--git-dir", join(root, `${repo}.git`), ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

  async function tellGitea(repo: string): Promise<void> {
    if (!options.forward) return;
    const refs = git(repo, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads").trim().split("\n").filter(Boolean);
    for (const line of refs) {
      const [branch, sha] = line.split(" ");
      await fetch(`${options.forward}/__fake_gitea`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ op: "setBranch", repo, branch, sha }),
      });
    }
  }

  async function cgi(req: IncomingMessage, res: ServerResponse, m: RegExpMatchArray): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? "/", "http://x");
    const child = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: url.pathname,
        REQUEST_METHOD: req.method ?? "GET",
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        CONTENT_LENGTH: String(body.byteLength),
        HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"] ?? ""),
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_USER: "beaver",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    // The backend may answer without reading its input (an error): a closed pipe is not ours to report.
    child.stdin.on("error", () => undefined);
    child.stdin.end(body);
    const out: Buffer[] = [];
    for await (const c of child.stdout) out.push(c as Buffer);
    await new Promise((ok) => child.once("close", ok));
    const all = Buffer.concat(out);
    let split = all.indexOf("\r\n\r\n");
    let sepLen = 4;
    if (split === -1) {
      split = all.indexOf("\n\n");
      sepLen = 2;
    }
    const head = all.subarray(0, split).toString("utf8");
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.split(/\r?\n/)) {
      const i = line.indexOf(":");
      if (i === -1) continue;
      const k = line.slice(0, i).trim();
      const v = line.slice(i + 1).trim();
      if (k.toLowerCase() === "status") status = Number(v.split(" ")[0]);
      else headers[k] = v;
    }
    res.writeHead(status, headers);
    res.end(all.subarray(split + sepLen));
    if (m[3] === "git-receive-pack") await tellGitea(`${m[1]}/${m[2]!.replace(/\.git$/, "")}`);
  }

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host") headers.set(k, v);
    const answer = await fetch(`${options.forward}${req.url}`, {
      method: req.method,
      headers,
      ...(body.byteLength > 0 ? { body } : {}),
    });
    const out: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (k !== "content-encoding" && k !== "content-length" && k !== "transfer-encoding") out[k] = v;
    });
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const m = path.match(GIT_PATH);
    const run = async () => {
      if (m) {
        const password = basicPassword(req);
        requests.push({ method: req.method ?? "GET", path, password });
        if (options.token && password !== options.token) {
          res.writeHead(401, { "WWW-Authenticate": 'Basic realm="Gitea"' });
          res.end("Unauthorized");
          return;
        }
        return cgi(req, res, m);
      }
      if (options.forward) return forward(req, res);
      res.writeHead(404);
      res.end();
    };
    run().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;

  return {
    url,
    root,
    requests,
    git,
    announce: tellGitea,
    createRepo(repo, files, opts = {}) {
      const branch = opts.branch ?? "main";
      const work = mkdtempSync(join(tmpdir(), "beaver-git-work-"));
      execFileSync("git", ["init", "-q", "-b", branch, work]);
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        writeFileSync(join(work, path), content);
      }
      for (const [path, target] of Object.entries(opts.symlinks ?? {})) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        symlinkSync(target, join(work, path));
      }
      execFileSync("git", ["-C", work, "add", "-A"]);
      execFileSync("git", ["-C", work, ...AUTHOR, "commit", "-q", "-m", "initial"]);
      const bare = join(root, `${repo}.git`);
      mkdirSync(dirname(bare), { recursive: true });
      execFileSync("git", ["clone", "-q", "--bare", work, bare]);
      execFileSync("git", ["--git-dir", bare, "config", "http.receivepack", "true"]);
      rmSync(work, { recursive: true, force: true });
      return `${url}/${repo}.git`;
    },
    stop: () =>
      new Promise<void>((ok) =>
        server.close(() => {
          rmSync(root, { recursive: true, force: true });
          ok();
        }),
      ),
  };
}

/**
 * Adds a commit to a bare repository's branch from outside (someone else pushing meanwhile); with
 * `to`, the commit goes to that (new) branch instead, made from `branch`.
 */
export async function pushFromElsewhere(
  server: GitServer,
  repo: string,
  branch: string,
  path: string,
  content: string,
  to = branch,
): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "beaver-git-other-"));
  execFileSync("git", ["clone", "-q", "--branch", branch, join(server.root, `${repo}.git`), work]);
  mkdirSync(dirname(join(work, path)), { recursive: true });
  writeFileSync(join(work, path), content);
  execFileSync("git", ["-C", work, "add", "-A"]);
  execFileSync("git", ["-C", work, ...AUTHOR, "commit", "-q", "-m", "meanwhile"]);
  execFileSync("git", ["-C", work, "push", "-q", "origin", `HEAD:refs/heads/${to}`]);
  rmSync(work, { recursive: true, force: true });
  await server.announce(repo);
}
