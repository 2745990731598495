/**
 * A fake Gitea for tests: the handful of API endpoints Beaver calls, backed by in-memory repos, pull
 * requests, files, comments, reviews and issues, recording every request it receives so a test can
 * check each one against Gitea's API description. It is a plain fetch handler, so the same fake
 * serves in-worker tests (through `setGiteaFetchForTests`) and e2e tests (`startFakeGiteaServer`
 * wraps it in a Node HTTP server). `setDown()` makes it fail like an unreachable Gitea.
 */
import { Hono, type Context } from "hono";

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/api/v1/repos/o/r/pulls/1`. */
  path: string;
  query: Record<string, string>;
  authorization: string | null;
  body: unknown;
}

export interface FakePull {
  number: number;
  title: string;
  body: string;
  author: string;
  headRef: string;
  headSha: string;
  baseRef: string;
  state: "open" | "closed";
  merged: boolean;
  diff: string;
  files: { filename: string; status: string; additions: number; deletions: number }[];
}

interface FakeRepo {
  defaultBranch: string;
  branches: Map<string, string>;
  /** branch → path → content */
  files: Map<string, Map<string, string>>;
  pulls: Map<number, FakePull>;
  nextIndex: number;
  /** Branches with a branch protection (GET …/branches/{branch} answers `protected: true`). */
  protectedBranches?: Set<string>;
}

export type DownMode = false | "503" | "network";

/** An Actions run with its jobs and their logs (newer Gitea's Actions API; test/fixtures/gitea/swagger.actions.json). */
export interface FakeRun {
  id: number;
  run_number: number;
  head_sha: string;
  status: string;
  conclusion: string;
  html_url: string;
  jobs: { id: number; name: string; status: string; conclusion: string; html_url: string; log: string }[];
}

export interface FakeRunInput {
  runNumber: number;
  headSha: string;
  jobs: { name: string; conclusion: "success" | "failure" | "skipped"; log: string }[];
}

const user = (login: string) => ({
  id: Math.abs(hash(login)) % 10_000,
  login,
  username: login,
  full_name: login,
  email: `${login}@example.test`,
});

function hash(s: string): number {
  let h = 0;
  for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) | 0;
  return h;
}

const sha = (seed: string) => {
  let out = "";
  let h = hash(seed);
  while (out.length < 40) {
    h = (h * 1103515245 + 12345) | 0;
    out += (h >>> 0).toString(16).padStart(8, "0");
  }
  return out.slice(0, 40);
};

function delay(ms: number, signal: AbortSignal | null | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

const toBase64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
const fromBase64 = (b64: string) => new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));

export class FakeGitea {
  readonly requests: RecordedRequest[] = [];
  readonly comments: { repo: string; number: number; body: string; author: string }[] = [];
  readonly reviews: { repo: string; number: number; event: string; body: string; author: string }[] = [];
  readonly issues: { repo: string; number: number; title: string; body: string; assignees: string[] }[] = [];
  readonly merges: { repo: string; number: number; method: string }[] = [];
  readonly commits: { repo: string; branch: string; message: string; files: { operation: string; path: string }[] }[] = [];
  readonly #repos = new Map<string, FakeRepo>();
  /** token → login (the user a token acts as); unknown tokens act as `beaver-bot`. */
  readonly #tokens = new Map<string, string>();
  #down: DownMode = false;
  #delayMs = 0;
  /** repo → its Actions runs; `#actionsApi` false answers 404 like Gitea 1.22, which has no such API. */
  readonly #runs = new Map<string, FakeRun[]>();
  #actionsApi = true;
  #nextActionsId = 1000;
  readonly #app = new Hono();

  /** Where the fake is reachable (used in `html_url`s); set once the server knows its port. */
  baseUrl: string;

  constructor(baseUrl = "http://gitea.test") {
    this.baseUrl = baseUrl;
    this.#routes();
  }

  setDown(mode: DownMode): void {
    this.#down = mode;
  }

  /** Answer every request this much later (the caller's abort signal still applies, as with a real server). */
  setDelay(ms: number): void {
    this.#delayMs = ms;
  }

  setActionsApi(on: boolean): void {
    this.#actionsApi = on;
  }

  /** A finished Actions run of `fullName`; the run's and jobs' ids are assigned here (ids differ from the run number, as in Gitea). */
  addRun(fullName: string, input: FakeRunInput): FakeRun {
    const runs = this.#runs.get(fullName) ?? [];
    const page = `${this.baseUrl}/${fullName}/actions/runs/${input.runNumber}`;
    const failedRun = input.jobs.some((j) => j.conclusion === "failure");
    const run: FakeRun = {
      id: this.#nextActionsId++,
      run_number: input.runNumber,
      head_sha: input.headSha,
      status: "completed",
      conclusion: failedRun ? "failure" : "success",
      html_url: page,
      jobs: input.jobs.map((j, i) => ({
        id: this.#nextActionsId++,
        name: j.name,
        status: "completed",
        conclusion: j.conclusion,
        html_url: `${page}/jobs/${i}`,
        log: j.log,
      })),
    };
    this.#runs.set(fullName, [run, ...runs]);
    return run;
  }

  addToken(token: string, login: string): void {
    this.#tokens.set(token, login);
  }

  /** A branch head set from outside (the git server after a push: test/support/git-server.ts). */
  setBranch(fullName: string, branch: string, headSha: string): void {
    const repo = this.#repo(fullName);
    repo.branches.set(branch, headSha);
    if (!repo.files.has(branch)) repo.files.set(branch, new Map(repo.files.get(repo.defaultBranch)));
  }

  addRepo(fullName: string, opts: { defaultBranch?: string; files?: Record<string, string>; protectedBranches?: string[] } = {}): void {
    const defaultBranch = opts.defaultBranch ?? "main";
    const files = new Map<string, Map<string, string>>([[defaultBranch, new Map(Object.entries(opts.files ?? {}))]]);
    this.#repos.set(fullName, {
      defaultBranch,
      branches: new Map([[defaultBranch, sha(`${fullName}:${defaultBranch}`)]]),
      files,
      pulls: new Map(),
      nextIndex: 1,
      protectedBranches: new Set(opts.protectedBranches ?? []),
    });
  }

  addPull(fullName: string, pr: Partial<FakePull> & { number: number; author: string; headRef: string }): FakePull {
    const repo = this.#repo(fullName);
    const full: FakePull = {
      title: `PR ${pr.number}`,
      body: "",
      headSha: sha(`${fullName}:${pr.headRef}`),
      baseRef: repo.defaultBranch,
      state: "open",
      merged: false,
      diff: `diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-old\n+new from PR ${pr.number}\n`,
      files: [{ filename: "README.md", status: "modified", additions: 1, deletions: 1 }],
      ...pr,
    };
    repo.pulls.set(pr.number, full);
    repo.branches.set(full.headRef, full.headSha);
    if (!repo.files.has(full.headRef)) repo.files.set(full.headRef, new Map(repo.files.get(repo.defaultBranch)));
    repo.nextIndex = Math.max(repo.nextIndex, pr.number + 1);
    return full;
  }

  pull(fullName: string, number: number): FakePull | undefined {
    return this.#repos.get(fullName)?.pulls.get(number);
  }

  file(fullName: string, branch: string, path: string): string | undefined {
    return this.#repos.get(fullName)?.files.get(branch)?.get(path);
  }

  /** The fetch handler (in-worker tests pass it to `setGiteaFetchForTests`). */
  fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const req = input instanceof Request && !init ? input : new Request(input, init);
    if (this.#down === "network") throw new TypeError("Network connection lost (fake Gitea is down)");
    if (this.#delayMs) await delay(this.#delayMs, init?.signal ?? (input instanceof Request ? input.signal : undefined));
    const url = new URL(req.url);
    const text = req.method === "GET" || req.method === "HEAD" ? "" : await req.clone().text();
    let body: unknown = null;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    this.requests.push({
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      authorization: req.headers.get("Authorization"),
      body,
    });
    if (this.#down === "503") return Response.json({ message: "service unavailable" }, { status: 503 });
    return this.#app.fetch(new Request(req.url, { method: req.method, headers: req.headers, body: text || undefined }));
  };

  #repo(fullName: string): FakeRepo {
    const repo = this.#repos.get(fullName);
    if (!repo) throw new Error(`fake Gitea has no repo ${fullName}`);
    return repo;
  }

  #actor(c: Context): string {
    const auth = c.req.header("Authorization") ?? "";
    const token = auth.replace(/^(Bearer|token)\s+/i, "");
    return this.#tokens.get(token) ?? "beaver-bot";
  }

  #pullJson(fullName: string, p: FakePull) {
    return {
      id: hash(`${fullName}#${p.number}`),
      number: p.number,
      title: p.title,
      body: p.body,
      state: p.state,
      merged: p.merged,
      user: user(p.author),
      html_url: `${this.baseUrl}/${fullName}/pulls/${p.number}`,
      head: { ref: p.headRef, sha: p.headSha, label: p.headRef },
      base: { ref: p.baseRef, sha: sha(`${fullName}:${p.baseRef}`), label: p.baseRef },
      changed_files: p.files.length,
    };
  }

  #routes(): void {
    const app = this.#app;
    const notFound = (c: Context, what: string) => c.json({ message: `${what} not found`, url: this.baseUrl }, 404);
    const repoOf = (c: Context) => this.#repos.get(`${c.req.param("owner")}/${c.req.param("repo")}`);
    const full = (c: Context) => `${c.req.param("owner")}/${c.req.param("repo")}`;

    app.get("/api/v1/repos/:owner/:repo/pulls/:file", (c) => {
      const repo = repoOf(c);
      const m = /^(\d+)(?:\.(diff|patch))?$/.exec(c.req.param("file"));
      const pr = m ? repo?.pulls.get(Number(m[1])) : undefined;
      if (!repo || !pr || !m) return notFound(c, "pull request");
      if (m[2]) return c.text(pr.diff);
      return c.json(this.#pullJson(full(c), pr));
    });
    app.get("/api/v1/repos/:owner/:repo/pulls/:index/files", (c) => {
      const pr = repoOf(c)?.pulls.get(Number(c.req.param("index")));
      if (!pr) return notFound(c, "pull request");
      return c.json(pr.files.map((f) => ({ ...f, changes: f.additions + f.deletions })));
    });
    app.get("/api/v1/repos/:owner/:repo/commits/:sha/pull", (c) => {
      const repo = repoOf(c);
      const pr = repo && [...repo.pulls.values()].find((p) => p.headSha === c.req.param("sha"));
      if (!pr) return notFound(c, "pull request for commit");
      return c.json(this.#pullJson(full(c), pr));
    });
    app.get("/api/v1/repos/:owner/:repo/contents/*", (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const prefix = `/api/v1/repos/${c.req.param("owner")}/${c.req.param("repo")}/contents/`;
      const path = decodeURIComponent(new URL(c.req.url).pathname.slice(prefix.length));
      const ref = c.req.query("ref") ?? repo.defaultBranch;
      const content = repo.files.get(ref)?.get(path);
      if (content === undefined) return notFound(c, "file");
      return c.json({
        name: path.split("/").pop(),
        path,
        type: "file",
        encoding: "base64",
        content: toBase64(content),
        sha: sha(`${ref}:${path}:${content}`),
        size: content.length,
      });
    });
    app.post("/api/v1/repos/:owner/:repo/issues/:index/comments", async (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const { body } = await c.req.json<{ body: string }>();
      const entry = { repo: full(c), number: Number(c.req.param("index")), body, author: this.#actor(c) };
      this.comments.push(entry);
      return c.json(
        {
          id: this.comments.length,
          body,
          user: user(entry.author),
          html_url: `${this.baseUrl}/${entry.repo}/issues/${entry.number}#issuecomment-${this.comments.length}`,
        },
        201,
      );
    });
    app.post("/api/v1/repos/:owner/:repo/pulls/:index/reviews", async (c) => {
      const pr = repoOf(c)?.pulls.get(Number(c.req.param("index")));
      if (!pr) return notFound(c, "pull request");
      const b = await c.req.json<{ event?: string; body?: string }>();
      const entry = { repo: full(c), number: pr.number, event: b.event ?? "", body: b.body ?? "", author: this.#actor(c) };
      this.reviews.push(entry);
      return c.json({ id: this.reviews.length, body: entry.body, state: entry.event, user: user(entry.author) });
    });
    app.post("/api/v1/repos/:owner/:repo/pulls/:index/merge", async (c) => {
      const pr = repoOf(c)?.pulls.get(Number(c.req.param("index")));
      if (!pr) return notFound(c, "pull request");
      if (pr.merged) return c.json({ message: "pull request is already merged" }, 405);
      const b = await c.req.json<{ Do: string }>();
      pr.merged = true;
      pr.state = "closed";
      this.merges.push({ repo: full(c), number: pr.number, method: b.Do });
      return c.body(null, 200);
    });
    app.get("/api/v1/repos/:owner/:repo/branch_protections", (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      return c.json([...(repo.protectedBranches ?? [])].map((name) => ({ rule_name: name, branch_name: name, enable_push: false })));
    });
    app.get("/api/v1/repos/:owner/:repo/branches/:branch", (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const name = c.req.param("branch");
      const head = repo.branches.get(name);
      if (!head) return notFound(c, "branch");
      return c.json({ name, commit: { id: head }, protected: repo.protectedBranches?.has(name) ?? false });
    });
    app.post("/api/v1/repos/:owner/:repo/branches", async (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const b = await c.req.json<{ new_branch_name: string; old_ref_name?: string; old_branch_name?: string }>();
      const from = b.old_ref_name ?? b.old_branch_name ?? repo.defaultBranch;
      if (!repo.branches.has(from)) return notFound(c, "base branch");
      if (repo.branches.has(b.new_branch_name)) return c.json({ message: "branch already exists" }, 409);
      repo.branches.set(b.new_branch_name, repo.branches.get(from)!);
      repo.files.set(b.new_branch_name, new Map(repo.files.get(from)));
      return c.json({ name: b.new_branch_name, commit: { id: repo.branches.get(from) } }, 201);
    });
    app.post("/api/v1/repos/:owner/:repo/contents", async (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const b = await c.req.json<{
        branch?: string;
        new_branch?: string;
        message?: string;
        files: { operation: string; path: string; content?: string; sha?: string }[];
      }>();
      const from = b.branch ?? repo.defaultBranch;
      const target = b.new_branch ?? from;
      const files = repo.files.get(from);
      if (!files) return notFound(c, "branch");
      const next = new Map(files);
      for (const f of b.files) {
        if (f.operation === "delete") next.delete(f.path);
        else if (f.operation === "update" && !next.has(f.path)) return c.json({ message: `file ${f.path} does not exist` }, 422);
        else next.set(f.path, fromBase64(f.content ?? ""));
      }
      repo.files.set(target, next);
      const commitSha = sha(`${target}:${this.commits.length}:${b.message ?? ""}`);
      repo.branches.set(target, commitSha);
      for (const pr of repo.pulls.values()) if (pr.headRef === target) pr.headSha = commitSha;
      this.commits.push({
        repo: full(c),
        branch: target,
        message: b.message ?? "",
        files: b.files.map((f) => ({ operation: f.operation, path: f.path })),
      });
      return c.json({ commit: { sha: commitSha, message: b.message ?? "" }, files: b.files.map((f) => ({ path: f.path })) }, 201);
    });
    app.post("/api/v1/repos/:owner/:repo/pulls", async (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const b = await c.req.json<{ title: string; head: string; base: string; body?: string }>();
      if (!repo.branches.has(b.head)) return c.json({ message: `head branch ${b.head} does not exist` }, 422);
      const pr = this.addPull(full(c), {
        number: repo.nextIndex,
        author: this.#actor(c),
        headRef: b.head,
        baseRef: b.base,
        title: b.title,
        body: b.body ?? "",
        headSha: repo.branches.get(b.head)!,
      });
      return c.json(this.#pullJson(full(c), pr), 201);
    });
    app.post("/api/v1/repos/:owner/:repo/issues", async (c) => {
      const repo = repoOf(c);
      if (!repo) return notFound(c, "repository");
      const b = await c.req.json<{ title: string; body?: string; assignees?: string[] }>();
      const number = repo.nextIndex++;
      const entry = { repo: full(c), number, title: b.title, body: b.body ?? "", assignees: b.assignees ?? [] };
      this.issues.push(entry);
      return c.json(
        {
          id: number,
          number,
          title: b.title,
          body: entry.body,
          assignees: entry.assignees.map(user),
          html_url: `${this.baseUrl}/${entry.repo}/issues/${number}`,
        },
        201,
      );
    });
    const runsOf = (c: Context) => (this.#actionsApi ? (this.#runs.get(full(c)) ?? []) : null);
    app.get("/api/v1/repos/:owner/:repo/actions/runs", (c) => {
      const runs = runsOf(c);
      if (!runs) return notFound(c, `route ${c.req.method} ${c.req.path}`);
      const headSha = c.req.query("head_sha");
      const list = runs.filter((r) => !headSha || r.head_sha === headSha).map(({ jobs: _jobs, ...r }) => r);
      return c.json({ workflow_runs: list, total_count: list.length });
    });
    app.get("/api/v1/repos/:owner/:repo/actions/runs/:run/jobs", (c) => {
      const runs = runsOf(c);
      if (!runs) return notFound(c, `route ${c.req.method} ${c.req.path}`);
      const run = runs.find((r) => r.id === Number(c.req.param("run")));
      if (!run) return notFound(c, "run");
      const jobs = run.jobs.map(({ log: _log, ...j }) => ({ ...j, run_id: run.id, head_sha: run.head_sha }));
      return c.json({ jobs, total_count: jobs.length });
    });
    app.get("/api/v1/repos/:owner/:repo/actions/jobs/:job/logs", (c) => {
      const runs = runsOf(c);
      if (!runs) return notFound(c, `route ${c.req.method} ${c.req.path}`);
      const job = runs.flatMap((r) => r.jobs).find((j) => j.id === Number(c.req.param("job")));
      if (!job) return notFound(c, "job");
      return c.text(job.log);
    });
    app.all("*", (c) => notFound(c, `route ${c.req.method} ${c.req.path}`));
  }
}

export interface FakeGiteaServer {
  gitea: FakeGitea;
  url: string;
  stop(): Promise<void>;
}

/** Control requests (not recorded): how an e2e test in another process drives the shared fake. */
type Control =
  | { op: "addRepo"; repo: string; defaultBranch?: string; files?: Record<string, string>; protectedBranches?: string[] }
  | { op: "setBranch"; repo: string; branch: string; sha: string }
  | { op: "addPull"; repo: string; pull: Partial<FakePull> & { number: number; author: string; headRef: string } }
  | { op: "addRun"; repo: string; run: FakeRunInput }
  | { op: "addToken"; token: string; login: string }
  | { op: "setDown"; mode: DownMode }
  | { op: "setDelay"; ms: number }
  | { op: "state" };

function control(gitea: FakeGitea, c: Control): unknown {
  switch (c.op) {
    case "addRepo":
      gitea.addRepo(c.repo, { defaultBranch: c.defaultBranch, files: c.files, protectedBranches: c.protectedBranches });
      return { ok: true };
    case "setBranch":
      gitea.setBranch(c.repo, c.branch, c.sha);
      return { ok: true };
    case "addPull":
      return gitea.addPull(c.repo, c.pull);
    case "addRun":
      return gitea.addRun(c.repo, c.run);
    case "addToken":
      gitea.addToken(c.token, c.login);
      return { ok: true };
    case "setDown":
      gitea.setDown(c.mode);
      return { ok: true };
    case "setDelay":
      gitea.setDelay(c.ms);
      return { ok: true };
    case "state":
      return {
        requests: gitea.requests,
        comments: gitea.comments,
        reviews: gitea.reviews,
        issues: gitea.issues,
        merges: gitea.merges,
        commits: gitea.commits,
      };
  }
}

export const CONTROL_PATH = "/__fake_gitea";

/** The fake on a real port (Node only: e2e and benchmarks). */
export async function startFakeGiteaServer(): Promise<FakeGiteaServer> {
  const http = await import("node:http");
  const gitea = new FakeGitea();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    if (req.url === CONTROL_PATH && req.method === "POST") {
      try {
        const out = control(gitea, JSON.parse(body?.toString() ?? "{}") as Control);
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify(out));
      } catch (err) {
        res.writeHead(400, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ message: String(err) }));
      }
      return;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    try {
      const response = await gitea.fetch(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body }));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch {
      // "network" down mode: drop the connection without an answer.
      req.socket.destroy();
    }
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  const url = `http://127.0.0.1:${port}`;
  gitea.baseUrl = url;
  return {
    gitea,
    url,
    stop: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

export interface FakeGiteaState {
  requests: RecordedRequest[];
  comments: FakeGitea["comments"];
  reviews: FakeGitea["reviews"];
  issues: FakeGitea["issues"];
  merges: FakeGitea["merges"];
  commits: FakeGitea["commits"];
}

/** Drive a fake started in another process (the e2e global setup). */
export function fakeGiteaControl(url: string) {
  const send = async <T>(c: Control): Promise<T> => {
    const res = await fetch(`${url}${CONTROL_PATH}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(c),
    });
    if (!res.ok) throw new Error(`fake Gitea control ${c.op}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    addRepo: (repo: string, opts: { defaultBranch?: string; files?: Record<string, string>; protectedBranches?: string[] } = {}) =>
      send({ op: "addRepo", repo, ...opts }),
    addPull: (repo: string, pull: Partial<FakePull> & { number: number; author: string; headRef: string }) =>
      send<FakePull>({ op: "addPull", repo, pull }),
    addRun: (repo: string, run: FakeRunInput) => send<FakeRun>({ op: "addRun", repo, run }),
    addToken: (token: string, login: string) => send({ op: "addToken", token, login }),
    setDown: (mode: DownMode) => send({ op: "setDown", mode }),
    setDelay: (ms: number) => send({ op: "setDelay", ms }),
    state: () => send<FakeGiteaState>({ op: "state" }),
  };
}
