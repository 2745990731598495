/**
 * `git` inside the workspace shell (docs/workspace.md, "Git"): an extra shell command backed by
 * isomorphic-git over the workspace (fs.ts) and Beaver's egress-checked fetch (http.ts), so the model
 * types what it knows — `git clone`, `status`, `diff`, `add`, `commit -m`, `log`, `checkout -b`,
 * `push origin <branch>` — and gets git-like answers and exit codes. Everything a command writes
 * (objects, index, refs, checked-out files) joins the shell command's overlay and is committed with it
 * as one workspace change; a failed clone removes what it wrote first, so nothing half-cloned shows.
 *
 * Who the commits are by, which credentials go to which host, and what may be pushed come from the
 * `GitHost` the composition root supplies (domains/toolchain/git-host.ts): this module knows git, not
 * Gitea. Pushes are refused before any network write when they would force or target the remote's
 * default or a protected branch and the policy does not allow it.
 *
 * The command runs in the session, called back by the shell Worker (runtime shell-host.ts), and is lazy:
 * isomorphic-git and the streaming clone load on the first `git` a shell runs, not when the Worker
 * starts (docs/performance.md, "The bundle").
 */
import type * as IsomorphicGit from "./isomorphic-git-lib.ts";
import type { NetworkSection, ShellCommand, WorkspaceShellFs } from "../../runtime/index.ts";
import type { StagedBlob } from "../../storage/files/objects.ts";
import type { FetchFn } from "../../storage/outbound.ts";
import { AppError } from "../../kernel/errors.ts";
import { gitFs } from "./fs.ts";
import { gitHttp, GitTooLargeError } from "./http.ts";
import type { Cloned, streamingClone as StreamingClone } from "./clone.ts";
import { formatDiff, formatLog, formatStatus, shortStatus, type StatusRow } from "./format.ts";

export interface GitAuthor {
  name: string;
  email: string;
}

export interface GitPolicy {
  allowForcePush: boolean;
  allowDefaultBranchPush: boolean;
}

/** What a deployment decides about git (domains/toolchain/git-host.ts builds it). */
export interface GitHost {
  fetch: FetchFn;
  /** Headers (Authorization) for a request to `url`; null when no credentials belong to its host. */
  credentials(url: URL): Promise<Record<string, string> | null>;
  author: GitAuthor;
  policy: GitPolicy;
  /** Whether the remote protects `branch` (a Gitea branch protection), when the host can tell. */
  isProtected?(remoteUrl: string, branch: string): Promise<boolean>;
  /** The URL of a bare `owner/name` given to `git clone` (the configured Gitea's repository), or null. */
  shorthand?(spec: string): string | null;
  /** Told after a push the remote accepted (a task records the commit it pushed). */
  pushed?(p: { remoteUrl: string; branch: string; commit: string }): Promise<void>;
}

export interface GitCommandOptions {
  files: WorkspaceShellFs;
  /** Resolved on the first command that needs it (config, secrets, the task's agent). */
  host: () => Promise<GitHost>;
  /** Stores one file of a checkout now (after its limit check), so a clone is never all in memory. */
  persist: (path: string, bytes: Uint8Array) => Promise<StagedBlob>;
  /** Most bytes a clone may download (`git_clone_bytes`). */
  maxCloneBytes: number;
  /** The largest object a clone accepts (`workspace_file_bytes`): no file of the checkout may be larger. */
  maxFileBytes: number;
  /** Runs a clone's or push's network work under `git_network_ms` instead of the shell's cap (runtime shell-clock.ts). */
  network?: NetworkSection;
  signal?: AbortSignal;
}

/** The shell's working directory mount (runtime/workspace/tools/bash.ts). */
const MOUNT = "/workspace";
export const GIT_SUBCOMMANDS = "init, clone, status, diff, add, rm, commit, log, checkout, switch, branch, push, rev-parse, remote, config";

/** Appended to the `bash` tool's description where `git` is available. */
export const GIT_SHELL_NOTE =
  "`git` is available as a built-in command backed by real git over HTTPS (" +
  GIT_SUBCOMMANDS +
  "): `git clone <url>` makes a shallow clone (credentials for the configured Gitea are added for you), commits are authored as " +
  "you, and `git push origin <branch>` pushes a branch; pushing to the default or a protected branch and force pushes are refused.";

interface Out {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const done = (stdout = "", stderr = ""): Out => ({ stdout, stderr, exitCode: 0 });
const fatal = (message: string, code = 128): Out => ({ stdout: "", stderr: `fatal: ${message}\n`, exitCode: code });
const usage = (message: string): Out => ({ stdout: "", stderr: `${message}\n`, exitCode: 129 });

/** A path of the shell ('/workspace/…') as a workspace path ('/…'), or null outside the workspace. */
function inWorkspace(path: string): string | null {
  if (path === MOUNT) return "/";
  if (path.startsWith(`${MOUNT}/`)) return path.slice(MOUNT.length);
  return null;
}

function resolvePath(base: string, rel: string): string {
  const parts: string[] = [];
  for (const seg of (rel.startsWith("/") ? rel : `${base}/${rel}`).split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") parts.pop();
    else parts.push(seg);
  }
  return `/${parts.join("/")}`;
}

/** A workspace path as a path inside the repository at `dir`, or null when it is outside it. */
function repoPath(dir: string, abs: string): string | null {
  if (dir === "/") return abs.slice(1);
  if (abs === dir) return "";
  return abs.startsWith(`${dir}/`) ? abs.slice(dir.length + 1) : null;
}

const shown = (dir: string) => (dir === "/" ? MOUNT : `${MOUNT}${dir}`);

/** isomorphic-git, set by the first `git` command's load (below); every use is inside a loaded command. */
let git: typeof IsomorphicGit;
/** The streaming clone (clone.ts, with its pack reader and pako), loaded with isomorphic-git. */
let streamingClone: typeof StreamingClone;

export function gitCommand(options: GitCommandOptions): ShellCommand {
  let host: Promise<GitHost> | null = null;
  const getHost = () => (host ??= options.host());
  let loaded: Promise<void> | null = null;
  const load = () =>
    (loaded ??= Promise.all([import("./isomorphic-git-lib.ts"), import("./clone.ts")]).then(([lib, clone]) => {
      git = lib;
      streamingClone = clone.streamingClone;
    }));
  return {
    name: "git",
    async run(args, io) {
      const cwd = inWorkspace(io.cwd.replace(/\/+$/, "") || "/");
      if (cwd === null) return fatal(`git works only inside ${MOUNT} (the workspace); the working directory is ${io.cwd}`);
      try {
        await load();
        return await new GitSession(options, getHost, cwd).run(args);
      } catch (err) {
        return explain(err);
      }
    },
  };
}

/** A readable `fatal:` line for an error from isomorphic-git, the fetch or the workspace. */
function explain(err: unknown): Out {
  if (err instanceof GitTooLargeError) return fatal(`the remote sent more than ${err.limit} bytes; the clone limit is git_clone_bytes`);
  if (err instanceof AppError) return fatal(err.message);
  const e = err as { code?: string; message?: string; data?: { statusCode?: number; response?: string }; errors?: unknown[] };
  // A checkout's several failures (isomorphic-git's MultipleGitError): the first one says what went wrong.
  if (Array.isArray(e.errors) && e.errors.length > 0) return explain(e.errors[0]);
  if (e.code === "HttpError") {
    const status = e.data?.statusCode;
    if (status === 401 || status === 403)
      return fatal(`authentication failed (HTTP ${status}): the remote refused this workspace's credentials`);
    if (status === 404) return fatal("repository not found (HTTP 404)");
    return fatal(`the remote answered HTTP ${status ?? "?"}`);
  }
  if (e.code === "NotFoundError") return fatal(e.message ?? "not found");
  if (typeof e.code === "string" && /^E[A-Z]+$/.test(e.code)) return fatal((e.message ?? "").replace(/^E[A-Z]+: /, ""));
  return fatal(e.message ?? String(err));
}

class GitSession {
  readonly #o: GitCommandOptions;
  readonly #host: () => Promise<GitHost>;
  readonly #cwd: string;
  readonly cache = {};

  constructor(o: GitCommandOptions, host: () => Promise<GitHost>, cwd: string) {
    this.#o = o;
    this.#host = host;
    this.#cwd = cwd;
  }

  fs(root: string) {
    return gitFs(this.#o.files, root);
  }

  async http(maxBytes: number, timeLimit: AbortSignal | null) {
    const host = await this.#host();
    const signals = [this.#o.signal, timeLimit].filter((s): s is AbortSignal => Boolean(s));
    return gitHttp({
      fetch: host.fetch,
      credentials: (url) => host.credentials(url),
      maxResponseBytes: maxBytes,
      ...(signals.length ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}),
    });
  }

  /** Network work (a clone, a push) with its HTTP client, under the git network time cap when the shell gives one. */
  net<T>(run: (http: Awaited<ReturnType<GitSession["http"]>>) => Promise<T>): Promise<T> {
    const go = (signal: AbortSignal | null) => this.http(this.#o.maxCloneBytes, signal).then(run);
    return this.#o.network ? this.#o.network((signal) => go(signal)) : go(null);
  }

  /** The repository containing the working directory. */
  async repo(): Promise<string> {
    try {
      return await git.findRoot({ fs: this.fs("/"), filepath: this.#cwd });
    } catch {
      throw new AppError("not_found", "not a git repository (or any of the parent directories): .git");
    }
  }

  async run(args: string[]): Promise<Out> {
    const [sub, ...rest] = args;
    switch (sub) {
      case undefined:
      case "help":
      case "--help":
        return done(`usage: git <command> [<args>]\nSupported here: ${GIT_SUBCOMMANDS}\n`);
      case "--version":
      case "version":
        return done(`git version ${git.version()} (isomorphic-git in Beaver)\n`);
      case "init":
        return this.init(rest);
      case "clone":
        return this.clone(rest);
      case "status":
        return this.status(rest);
      case "diff":
        return this.diff(rest);
      case "add":
        return this.add(rest);
      case "rm":
        return this.rm(rest);
      case "commit":
        return this.commit(expandShort(rest));
      case "log":
        return this.log(rest);
      case "checkout":
        return this.checkout(rest, "checkout");
      case "switch":
        return this.checkout(
          rest.map((a) => (a === "-c" || a === "--create" ? "-b" : a)),
          "switch",
        );
      case "branch":
        return this.branch(rest);
      case "push":
        return this.push(expandShort(rest));
      case "rev-parse":
        return this.revParse(rest);
      case "remote":
        return this.remote(rest);
      case "config":
        return this.config(rest);
      default:
        return { stdout: "", stderr: `git: '${sub}' is not a git command available here. Supported: ${GIT_SUBCOMMANDS}\n`, exitCode: 1 };
    }
  }

  async init(args: string[]): Promise<Out> {
    let branch = "main";
    const positional: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === "-b" || a === "--initial-branch") branch = args[++i] ?? branch;
      else if (a.startsWith("--initial-branch=")) branch = a.slice("--initial-branch=".length);
      else if (a === "-q" || a === "--quiet") continue;
      else positional.push(a);
    }
    const dir = resolvePath(this.#cwd, positional[0] ?? ".");
    await git.init({ fs: this.fs(dir), dir, defaultBranch: branch });
    return done(`Initialized empty Git repository in ${shown(dir) === MOUNT ? MOUNT : shown(dir)}/.git/\n`);
  }

  async clone(args: string[]): Promise<Out> {
    let depth = 1;
    let ref: string | undefined;
    const positional: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === "--depth") depth = Number(args[++i]);
      else if (a.startsWith("--depth=")) depth = Number(a.slice(8));
      else if (a === "-b" || a === "--branch") ref = args[++i];
      else if (a.startsWith("--branch=")) ref = a.slice(9);
      else if (a === "-q" || a === "--quiet" || a === "--single-branch" || a === "--no-tags") continue;
      else if (a.startsWith("-")) return usage(`error: unknown option '${a}' (clone takes --depth, --branch)`);
      else positional.push(a);
    }
    let url = positional[0];
    if (!url) return usage("usage: git clone [--depth <n>] [--branch <name>] <url> [<directory>]");
    if (/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(url)) {
      const full = (await this.#host()).shorthand?.(url) ?? null;
      if (!full) return fatal(`'${url}' is not a URL, and no Gitea is configured to clone it from`);
      url = full;
    }
    if (!/^https?:\/\//i.test(url)) return fatal(`only http(s) remotes can be cloned here, not '${url}'`);
    if (!Number.isInteger(depth) || depth < 1 || depth > 1000) return fatal("--depth must be a whole number from 1 to 1000");
    const name = positional[1] ?? (new URL(url).pathname.split("/").filter(Boolean).pop() ?? "repo").replace(/\.git$/, "");
    const dir = resolvePath(this.#cwd, name);
    const files = this.#o.files;
    if (await files.exists(dir)) {
      const st = await files.stat(dir);
      if (!st.isDirectory || (await files.readdir(dir)).length > 0)
        return fatal(`destination path '${positional[1] ?? name}' already exists and is not an empty directory.`);
    }
    // A clone writes a whole repository: store each file at once instead of holding them all.
    files.spillTo(this.#o.persist);
    let cloned: Cloned;
    try {
      cloned = await this.net((http) =>
        streamingClone(git, { fs: this.fs(dir), dir, http, url, ...(ref ? { ref } : {}), depth, maxObjectBytes: this.#o.maxFileBytes }),
      );
    } catch (err) {
      // Nothing half-cloned stays: the destination was absent or empty before.
      if (dir === "/") for (const child of await files.readdir("/")) await files.rm(`/${child}`, { recursive: true, force: true });
      else await files.rm(dir, { recursive: true, force: true });
      throw err;
    }
    const into = `Cloning into '${positional[1] ?? name}'...\n`;
    if (cloned.head === null)
      return done(
        `Cloned ${url} into ${shown(dir)}: an empty repository\n`,
        `${into}warning: You appear to have cloned an empty repository.\n`,
      );
    const count = (await git.listFiles({ fs: this.fs(dir), dir, cache: this.cache })).length;
    return done(
      `Cloned ${url} into ${shown(dir)}: ${cloned.branch ? `branch ${cloned.branch}` : "detached HEAD"} at ${cloned.head.slice(0, 7)} (depth ${depth}), ${count} files\n`,
      into,
    );
  }

  async matrix(dir: string, filepaths?: string[]): Promise<StatusRow[]> {
    return (await git.statusMatrix({
      fs: this.fs(dir),
      dir,
      cache: this.cache,
      ...(filepaths && filepaths.length > 0 ? { filepaths } : {}),
    })) as StatusRow[];
  }

  /** Repository paths named by `args` (relative to the working directory); '.' or none means all. */
  paths(dir: string, args: string[]): string[] {
    const out: string[] = [];
    for (const a of args) {
      const p = repoPath(dir, resolvePath(this.#cwd, a));
      if (p === null) throw new AppError("bad_request", `'${a}' is outside repository at '${shown(dir)}'`);
      out.push(p);
    }
    return out.includes("") ? [] : out;
  }

  async status(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    const rows = await this.matrix(dir);
    const branch = await git.currentBranch({ fs, dir });
    if (args.some((a) => a === "-s" || a === "--short" || a.startsWith("--porcelain")))
      return done(shortStatus(rows, args.includes("-b") || args.includes("--branch") ? branch : undefined));
    return done(formatStatus(rows, branch ?? null));
  }

  async stageOids(dir: string, wanted: Set<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    await git.walk({
      fs: this.fs(dir),
      dir,
      cache: this.cache,
      trees: [git.STAGE()],
      map: async (filepath, [entry]) => {
        if (entry && wanted.has(filepath) && (await entry.type()) === "blob") out.set(filepath, await entry.oid());
        return true;
      },
    });
    return out;
  }

  async diff(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    const cached = args.includes("--cached") || args.includes("--staged");
    const mode = args.includes("--stat")
      ? "stat"
      : args.includes("--name-only")
        ? "name-only"
        : args.includes("--name-status")
          ? "name-status"
          : "patch";
    const sep = args.indexOf("--");
    const pathArgs = (sep === -1 ? args : args.slice(sep + 1)).filter((a) => !a.startsWith("-"));
    if (sep === -1 && pathArgs.some((a) => a === "HEAD" || /^[0-9a-f]{7,40}$/.test(a)))
      return fatal(
        "git diff here compares the index with the working tree (or, with --cached, HEAD with the index); revisions are not supported",
      );
    // statusMatrix: stage 1 = as HEAD, 2 = as the working tree, 3 = neither; 0 = absent.
    const rows = (await this.matrix(dir, this.paths(dir, pathArgs))).filter(([, h, w, s]) =>
      cached ? (h === 0 ? s !== 0 : s !== 1) : s === 1 ? w !== 1 : s === 3,
    );
    const stage = await this.stageOids(dir, new Set(rows.map((r) => r[0])));
    const head = await git.resolveRef({ fs, dir, ref: "HEAD" }).catch(() => null);
    const readAt = async (oid: string | undefined) => (oid ? (await git.readBlob({ fs, dir, oid, cache: this.cache })).blob : null);
    const readHead = async (filepath: string) =>
      head
        ? await git.readBlob({ fs, dir, oid: head, filepath, cache: this.cache }).then(
            (b) => b.blob,
            () => null,
          )
        : null;
    const files: { path: string; before: Uint8Array | null; after: Uint8Array | null }[] = [];
    for (const [path, h, w, s] of rows) {
      if (cached)
        files.push({ path, before: h === 1 ? await readHead(path) : null, after: s === 0 ? null : await readAt(stage.get(path)) });
      else {
        const before = await readAt(stage.get(path));
        const after = w === 0 ? null : await this.#o.files.readFileBuffer(`${dir === "/" ? "" : dir}/${path}`);
        files.push({ path, before, after });
      }
    }
    return done(formatDiff(files, mode));
  }

  async add(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    const all = args.some((a) => a === "-A" || a === "--all" || a === "-u" || a === "--update");
    const named = args.filter((a) => !a.startsWith("-"));
    if (!all && named.length === 0) return usage("Nothing specified, nothing added.\nhint: Maybe you wanted to say 'git add .'?");
    const rows = await this.matrix(dir, all ? [] : this.paths(dir, named));
    const onlyTracked = args.includes("-u") || args.includes("--update");
    if (!all && rows.length === 0) return fatal(`pathspec '${named[0]}' did not match any files`);
    for (const [filepath, h, w, s] of rows) {
      if (onlyTracked && h === 0 && s === 0) continue;
      if (w === 0) {
        if (s !== 0) await git.remove({ fs, dir, filepath, cache: this.cache });
      } else if (!(w === 1 && s === 1) && !(w === 2 && s === 2)) await git.add({ fs, dir, filepath, cache: this.cache });
    }
    return done();
  }

  async rm(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    const cachedOnly = args.includes("--cached");
    const named = args.filter((a) => !a.startsWith("-"));
    if (named.length === 0) return usage("usage: git rm [--cached] [-r] <file>...");
    const tracked = new Set(await git.listFiles({ fs, dir, cache: this.cache }));
    const out: string[] = [];
    for (const p of this.paths(
      dir,
      named.filter((a) => a !== "."),
    )) {
      const under = [...tracked].filter((t) => t === p || t.startsWith(`${p}/`));
      if (under.length === 0) return fatal(`pathspec '${p}' did not match any files`);
      for (const filepath of under) {
        await git.remove({ fs, dir, filepath, cache: this.cache });
        if (!cachedOnly) await this.#o.files.rm(`${dir === "/" ? "" : dir}/${filepath}`, { force: true });
        out.push(`rm '${filepath}'`);
      }
    }
    return done(out.map((l) => `${l}\n`).join(""));
  }

  async commit(args: string[]): Promise<Out> {
    const messages: string[] = [];
    let stageTracked = false;
    let allowEmpty = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === "-m" || a === "--message") messages.push(args[++i] ?? "");
      else if (a.startsWith("--message=")) messages.push(a.slice(10));
      else if (a === "-a" || a === "--all") stageTracked = true;
      else if (a === "--allow-empty") allowEmpty = true;
      else if (a === "-q" || a === "--quiet" || a === "--no-verify" || a === "-n") continue;
      else return usage(`error: unsupported option '${a}' (commit takes -m <message>, -a, --allow-empty)`);
    }
    if (messages.length === 0 || messages.every((m) => m.trim() === ""))
      return usage('Aborting commit due to empty commit message (use git commit -m "<message>"; there is no editor here).');
    const dir = await this.repo();
    const fs = this.fs(dir);
    if (stageTracked) await this.add(["-u"]);
    const rows = await this.matrix(dir);
    const staged = rows.filter(([, h, , s]) => !(h === 1 && s === 1) && !(h === 0 && s === 0));
    if (staged.length === 0 && !allowEmpty)
      return { stdout: formatStatus(rows, (await git.currentBranch({ fs, dir })) ?? null, true), stderr: "", exitCode: 1 };
    const { author } = await this.#host();
    const oid = await git.commit({ fs, dir, message: messages.join("\n\n"), author, committer: author, cache: this.cache });
    const branch = (await git.currentBranch({ fs, dir })) ?? "detached HEAD";
    const first = messages[0]!.split("\n")[0];
    return done(`[${branch} ${oid.slice(0, 7)}] ${first}\n ${staged.length} file${staged.length === 1 ? "" : "s"} changed\n`);
  }

  async log(args: string[]): Promise<Out> {
    let depth: number | undefined;
    let oneline = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === "-n" || a === "--max-count") depth = Number(args[++i]);
      else if (a.startsWith("--max-count=")) depth = Number(a.slice(12));
      else if (/^-\d+$/.test(a)) depth = Number(a.slice(1));
      else if (a === "--oneline") oneline = true;
      else if (a.startsWith("-")) return usage(`error: unsupported option '${a}' (log takes -n <count>, --oneline)`);
    }
    const dir = await this.repo();
    const fs = this.fs(dir);
    let commits;
    try {
      commits = await git.log({ fs, dir, cache: this.cache, ...(depth ? { depth } : {}) });
    } catch (err) {
      if ((err as { code?: string }).code === "NotFoundError")
        return fatal(`your current branch '${(await git.currentBranch({ fs, dir })) ?? "HEAD"}' does not have any commits yet`);
      throw err;
    }
    return done(formatLog(commits, oneline));
  }

  async checkout(args: string[], verb: string): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    const b = args.indexOf("-b");
    if (b !== -1 || args.includes("-B")) {
      const at = b !== -1 ? b : args.indexOf("-B");
      const name = args[at + 1];
      if (!name) return usage(`error: switch '${args[at]}' requires a value`);
      if (!validBranchName(name)) return fatal(`'${name}' is not a valid branch name`);
      const start = args[at + 2];
      try {
        await git.branch({ fs, dir, ref: name, checkout: true, force: args.includes("-B"), ...(start ? { object: start } : {}) });
      } catch (err) {
        if ((err as { code?: string }).code === "AlreadyExistsError") return fatal(`a branch named '${name}' already exists`);
        throw err;
      }
      return done("", `Switched to a new branch '${name}'\n`);
    }
    const sep = args.indexOf("--");
    if (sep !== -1 || (verb === "checkout" && args.length > 1)) {
      const filepaths = this.paths(
        dir,
        (sep === -1 ? args : args.slice(sep + 1)).filter((a) => !a.startsWith("-")),
      );
      await git.checkout({ fs, dir, force: true, cache: this.cache, ...(filepaths.length > 0 ? { filepaths } : {}) });
      return done("", `Updated ${filepaths.length || "all"} path${filepaths.length === 1 ? "" : "s"} from HEAD\n`);
    }
    const ref = args.find((a) => !a.startsWith("-"));
    if (!ref) return usage(`usage: git ${verb} <branch> | git ${verb} ${verb === "switch" ? "-c" : "-b"} <new-branch>`);
    const branches = await git.listBranches({ fs, dir });
    if (!branches.includes(ref)) {
      if (verb === "checkout") {
        const filepaths = this.paths(dir, [ref]);
        const tracked = await git.listFiles({ fs, dir, cache: this.cache });
        if (tracked.some((t) => t === filepaths[0] || t.startsWith(`${filepaths[0]}/`))) {
          await git.checkout({ fs, dir, force: true, filepaths, cache: this.cache });
          return done("", `Updated paths under '${ref}' from HEAD\n`);
        }
      }
      return fatal(`invalid reference: ${ref} (branches: ${branches.join(", ") || "none"})`);
    }
    await git.checkout({ fs, dir, ref, cache: this.cache });
    return done("", `Switched to branch '${ref}'\n`);
  }

  async branch(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    const current = await git.currentBranch({ fs, dir });
    if (args.includes("--show-current")) return done(current ? `${current}\n` : "");
    const named = args.filter((a) => !a.startsWith("-"));
    if (named.length === 0) {
      const all = await git.listBranches({ fs, dir });
      return done(all.map((b) => `${b === current ? "*" : " "} ${b}\n`).join(""));
    }
    if (args.includes("-d") || args.includes("-D")) {
      await git.deleteBranch({ fs, dir, ref: named[0]! });
      return done(`Deleted branch ${named[0]}.\n`);
    }
    await git.branch({ fs, dir, ref: named[0]!, ...(named[1] ? { object: named[1] } : {}) });
    return done();
  }

  async revParse(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    if (args.includes("--show-toplevel")) return done(`${shown(dir)}\n`);
    if (args.includes("--abbrev-ref")) return done(`${(await git.currentBranch({ fs, dir })) ?? "HEAD"}\n`);
    const ref = args.find((a) => !a.startsWith("-")) ?? "HEAD";
    const oid = await git.resolveRef({ fs, dir, ref });
    return done(`${args.includes("--short") ? oid.slice(0, 7) : oid}\n`);
  }

  async remote(args: string[]): Promise<Out> {
    const dir = await this.repo();
    const fs = this.fs(dir);
    if (args[0] === "add" && args[1] && args[2]) {
      if (!/^https?:\/\//i.test(args[2])) return fatal(`only http(s) remotes are supported, not '${args[2]}'`);
      await git.addRemote({ fs, dir, remote: args[1], url: args[2] });
      return done();
    }
    if (args[0] === "get-url" && args[1]) {
      const url = await git.getConfig({ fs, dir, path: `remote.${args[1]}.url` });
      return url ? done(`${url}\n`) : { stdout: "", stderr: `error: No such remote '${args[1]}'\n`, exitCode: 2 };
    }
    const remotes = await git.listRemotes({ fs, dir });
    if (args.includes("-v"))
      return done(remotes.flatMap((r) => [`${r.remote}\t${r.url} (fetch)\n`, `${r.remote}\t${r.url} (push)\n`]).join(""));
    return done(remotes.map((r) => `${r.remote}\n`).join(""));
  }

  async config(args: string[]): Promise<Out> {
    const key = args.find((a) => !a.startsWith("-"));
    const value = args.filter((a) => !a.startsWith("-"))[1];
    const { author } = await this.#host();
    if (key === "user.name" || key === "user.email") {
      const mine = key === "user.name" ? author.name : author.email;
      if (value === undefined) return done(`${mine}\n`);
      return done(
        "",
        `note: commits here are authored as ${author.name} <${author.email}> (set by the workspace); ${key} is not changed\n`,
      );
    }
    if (!key) return usage("usage: git config <key> [<value>]");
    const dir = await this.repo();
    const fs = this.fs(dir);
    if (value === undefined) {
      const v = await git.getConfig({ fs, dir, path: key });
      return v === undefined ? { stdout: "", stderr: "", exitCode: 1 } : done(`${String(v)}\n`);
    }
    if (/^(remote|credential|http|url|core)\./i.test(key)) return fatal(`'${key}' cannot be set here (remotes: git remote add)`);
    await git.setConfig({ fs, dir, path: key, value });
    return done();
  }

  async push(args: string[]): Promise<Out> {
    let force = false;
    let setUpstream = false;
    const positional: string[] = [];
    for (const a of args) {
      if (a === "-f" || a === "--force" || a === "--force-with-lease" || a.startsWith("--force-with-lease=")) force = true;
      else if (a === "-u" || a === "--set-upstream") setUpstream = true;
      else if (a === "-q" || a === "--quiet" || a === "--no-verify") continue;
      else if (a.startsWith("-")) return usage(`error: unsupported option '${a}' (push takes [-u] [--force] <remote> <branch>)`);
      else positional.push(a);
    }
    const dir = await this.repo();
    const fs = this.fs(dir);
    const remote = positional[0] ?? "origin";
    const current = await git.currentBranch({ fs, dir });
    let spec = positional[1] ?? current;
    if (!spec) return fatal("you are not currently on a branch; name the branch to push (git push origin <branch>)");
    if (spec.startsWith("+")) {
      force = true;
      spec = spec.slice(1);
    }
    let [src, dst] = spec.includes(":") ? (spec.split(":", 2) as [string, string]) : [spec, spec];
    if (src === "HEAD") src = current ?? "HEAD";
    if (dst === "HEAD") dst = current ?? "HEAD";
    dst = dst.replace(/^refs\/heads\//, "");
    if (src === "") return fatal("deleting remote branches is not allowed here");
    const url = await git.getConfig({ fs, dir, path: `remote.${remote}.url` });
    if (typeof url !== "string") return fatal(`'${remote}' does not appear to be a git repository (git remote -v lists the remotes)`);
    const host = await this.#host();
    if (force && !host.policy.allowForcePush)
      return fatal(`force pushes are not allowed by this workspace's policy; push new commits on top of '${dst}' instead`, 1);
    // The remote's refs, the policy checks against them and the push: network time (git_network_ms).
    const outcome = await this.net(async (http) => {
      const info = await git.getRemoteInfo({ http, url });
      const defaultRef = typeof info.HEAD === "string" ? info.HEAD.replace(/^refs\/heads\//, "") : null;
      if (dst === defaultRef && !host.policy.allowDefaultBranchPush)
        return fatal(
          `refusing to push to '${dst}', the repository's default branch; push to a new branch (git checkout -b fix/<issue>-<brief>) and open a pull request`,
          1,
        );
      if (host.isProtected && (await host.isProtected(url, dst)))
        return fatal(
          `refusing to push to '${dst}': the branch is protected on the remote; push to another branch and open a pull request`,
          1,
        );
      const heads = (info.refs as { heads?: Record<string, string> } | undefined)?.heads ?? {};
      const before = heads[dst];
      const oid = await git.resolveRef({ fs, dir, ref: src });
      try {
        return { result: await git.push({ fs, http, dir, remote, ref: src, remoteRef: dst, force, cache: this.cache }), before, oid };
      } catch (err) {
        const e = err as { code?: string; data?: { reason?: string; result?: { refs?: Record<string, { error?: string }> } } };
        if (e.code === "PushRejectedError" || e.code === "GitPushError") {
          const reason = e.data?.reason ?? Object.values(e.data?.result?.refs ?? {})[0]?.error ?? "rejected";
          return rejected(url, src, dst, reason);
        }
        throw err;
      }
    });
    if (!("result" in outcome)) return outcome;
    const { result, before, oid } = outcome;
    const status = result.refs[`refs/heads/${dst}`];
    if (!result.ok || (status && !status.ok)) return rejected(url, src, dst, status?.error ?? result.error ?? "rejected");
    if (setUpstream) {
      await git.setConfig({ fs, dir, path: `branch.${src}.remote`, value: remote });
      await git.setConfig({ fs, dir, path: `branch.${src}.merge`, value: `refs/heads/${dst}` });
    }
    await host.pushed?.({ remoteUrl: url, branch: dst, commit: oid });
    const line = before
      ? before === oid
        ? `Everything up-to-date\n`
        : `To ${url}\n   ${before.slice(0, 7)}..${oid.slice(0, 7)}  ${src} -> ${dst}\n`
      : `To ${url}\n * [new branch]      ${src} -> ${dst}\n`;
    return done(`pushed ${oid}\n`, line);
  }
}

/** Combined short options as separate ones (`-qam msg` is `-q -a -m msg`), as git reads them. */
function expandShort(args: string[]): string[] {
  return args.flatMap((a) => (/^-[A-Za-z]{2,}$/.test(a) ? [...a.slice(1)].map((c) => `-${c}`) : [a]));
}

/** git's branch name rules, the ones a model can trip over (check-ref-format). */
function validBranchName(name: string): boolean {
  return (
    /^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(name) &&
    !name.includes("..") &&
    !name.includes("//") &&
    !name.endsWith("/") &&
    !name.endsWith(".lock") &&
    !name.endsWith(".")
  );
}

function rejected(url: string, src: string, dst: string, reason: string): Out {
  const nff = /fast-forward|fetch first|non-fast/i.test(reason);
  const hint = nff
    ? "hint: the remote branch has commits that are not in your branch (someone pushed meanwhile); force pushes are not allowed here:\n" +
      "hint: push to a new branch instead (git checkout -b <new-branch> && git push origin <new-branch>)\n"
    : "";
  return {
    stdout: "",
    stderr: `To ${url}\n ! [rejected]        ${src} -> ${dst} (${nff ? "non-fast-forward" : reason})\nerror: failed to push some refs to '${url}'\n${hint}`,
    exitCode: 1,
  };
}
