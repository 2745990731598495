/**
 * A shallow clone that streams (docs/workspace.md, "Git", its memory paragraph). isomorphic-git's own
 * clone collects the whole pack in memory, indexes it there and reads the checkout out of it: a
 * 20 MB repository peaked at 118 MiB of a 128 MiB isolate. Here the pack is read as it arrives
 * (upload-pack.ts, pack-reader.ts) and every object is written at once as a loose object through
 * isomorphic-git (`writeObject`, into the workspace, which stores each file as it is written), so memory
 * holds the chunk at hand, the object being resolved and a bounded cache of delta bases. Ref discovery,
 * refs, config and the checkout stay isomorphic-git's.
 *
 * The pack trailer's SHA-1 is not recomputed (that would need an incremental SHA-1 the platform does
 * not offer): every object's id is computed from its content as it is written, the requested commit must
 * be among them, and the checkout reaches each tree and file from that commit by id, so a damaged byte
 * anywhere in what is checked out surfaces as a missing object and fails the clone.
 */
import type { HttpClient } from "isomorphic-git";
import type * as IsomorphicGit from "./isomorphic-git-lib.ts";
import { applyDelta } from "./delta.ts";
import type { gitFs } from "./fs.ts";
import { PackFormatError, readPack, type ObjectType, type PackEntry } from "./pack-reader.ts";
import { readUploadPackAnswer, uploadPackRequest } from "./upload-pack.ts";

type Git = typeof IsomorphicGit;
type GitFsClient = ReturnType<typeof gitFs>;

export interface CloneRequest {
  fs: GitFsClient;
  dir: string;
  http: HttpClient;
  url: string;
  /** A branch or tag of the remote; its default branch when absent. */
  ref?: string;
  depth: number;
  /** The largest object (inflated) the clone accepts: a workspace file's limit. */
  maxObjectBytes: number;
}

export interface Cloned {
  /** The branch checked out, or null for a tag, a detached head or an empty repository. */
  branch: string | null;
  head: string | null;
}

/** Bytes of recently written objects kept for the deltas that follow them (pack order puts bases first). */
const BASE_CACHE_BYTES = 8 * 1024 * 1024;
/** Most bytes of deltas held while their base has not arrived (git's own non-thin packs never need it). */
const PENDING_DELTA_BYTES = 16 * 1024 * 1024;

class BaseCache {
  readonly #map = new Map<string, { type: ObjectType; data: Uint8Array }>();
  #bytes = 0;

  get(oid: string) {
    const hit = this.#map.get(oid);
    if (hit) {
      this.#map.delete(oid);
      this.#map.set(oid, hit);
    }
    return hit;
  }

  set(oid: string, type: ObjectType, data: Uint8Array): void {
    if (data.byteLength > BASE_CACHE_BYTES / 4 || this.#map.has(oid)) return;
    this.#map.set(oid, { type, data });
    this.#bytes += data.byteLength;
    for (const [old, v] of this.#map) {
      if (this.#bytes <= BASE_CACHE_BYTES) break;
      this.#map.delete(old);
      this.#bytes -= v.data.byteLength;
    }
  }
}

async function* once(bytes: Uint8Array): AsyncIterableIterator<Uint8Array> {
  yield bytes;
}

function httpError(statusCode: number): Error {
  // The shape isomorphic-git's HttpError has, which the command's error explainer reads.
  return Object.assign(new Error(`HTTP Error: ${statusCode}`), { code: "HttpError", data: { statusCode } });
}

export async function streamingClone(git: Git, req: CloneRequest): Promise<Cloned> {
  const { fs, dir, http } = req;
  const url = req.url.replace(/\/+$/, "");
  await git.init({ fs, dir, defaultBranch: "main" });
  await git.addRemote({ fs, dir, remote: "origin", url });
  const info = await git.getRemoteInfo2({ http, url, protocolVersion: 1 });
  const refs = info.refs ?? [];
  if (refs.length === 0) return { branch: null, head: null };

  const byName = new Map(refs.map((r) => [r.ref, r]));
  let branch: string | null = null;
  let tag: string | null = null;
  let want: string | undefined;
  if (req.ref) {
    const name = req.ref.replace(/^refs\/(heads|tags)\//, "");
    const head = byName.get(`refs/heads/${name}`);
    const tagged = byName.get(`refs/tags/${name}`);
    if (head) [branch, want] = [name, head.oid];
    // The tag as advertised (git's upload-pack accepts only advertised ids as wants); the pack brings what it points at.
    else if (tagged) [tag, want] = [name, tagged.oid];
    else throw Object.assign(new Error(`Remote branch ${req.ref} not found in upstream origin`), { code: "NotFoundError" });
  } else {
    const head = byName.get("HEAD");
    if (!head) throw Object.assign(new Error("the remote names no HEAD; give a branch with --branch"), { code: "NotFoundError" });
    want = head.oid;
    branch = head.target?.startsWith("refs/heads/") ? head.target.slice("refs/heads/".length) : null;
  }
  const capabilities = Object.keys(info.capabilities);
  if (!capabilities.includes("shallow")) throw new Error("the remote does not offer shallow clones");
  const sideBand = capabilities.includes("side-band-64k") || capabilities.includes("side-band");

  const res = await http.request({
    url: `${url}/git-upload-pack`,
    method: "POST",
    headers: { "content-type": "application/x-git-upload-pack-request", accept: "application/x-git-upload-pack-result" },
    body: once(uploadPackRequest({ want, capabilities, depth: req.depth, agent: "beaver" })),
  });
  if (res.statusCode !== 200 || !res.body) throw httpError(res.statusCode);
  const answer = await readUploadPackAnswer(res.body, sideBand);
  await storeObjects(git, req, answer.pack);
  // The requested commit itself must have arrived (the trailer is not checked: see the header).
  await git.readCommit({ fs, dir, oid: want });
  if (answer.shallows.length > 0) await fs.promises.writeFile(`${dir}/.git/shallow`, `${answer.shallows.join("\n")}\n`);

  if (branch !== null) {
    await git.writeRef({ fs, dir, ref: `refs/remotes/origin/${branch}`, value: want, force: true });
    // Creates the local branch from the remote-tracking one, with its upstream config, and checks it out.
    await git.checkout({ fs, dir, ref: branch, remote: "origin" });
  } else if (tag !== null) {
    await git.writeRef({ fs, dir, ref: `refs/tags/${tag}`, value: want, force: true });
    await git.checkout({ fs, dir, ref: tag });
  } else {
    await git.writeRef({ fs, dir, ref: "HEAD", value: want, force: true });
    await git.checkout({ fs, dir, ref: "HEAD", noUpdateHead: true });
  }
  return { branch, head: want };
}

/** Writes every pack entry as a loose object, resolving deltas against objects already written. */
async function storeObjects(git: Git, req: CloneRequest, pack: AsyncIterable<Uint8Array>): Promise<void> {
  const { fs, dir } = req;
  const byOffset = new Map<number, string>();
  const types = new Map<string, ObjectType>();
  const cache = new BaseCache();
  const pending: PackEntry[] = [];
  let pendingBytes = 0;

  const write = async (offset: number, type: ObjectType, data: Uint8Array) => {
    const oid = await git.writeObject({ fs, dir, type, object: data, format: "content" });
    byOffset.set(offset, oid);
    types.set(oid, type);
    cache.set(oid, type, data);
  };
  const base = async (oid: string) => {
    const hit = cache.get(oid);
    if (hit) return hit;
    const read = await git.readObject({ fs, dir, oid, format: "content" });
    const data = read.object as Uint8Array;
    const type = read.type as ObjectType;
    cache.set(oid, type, data);
    return { type, data };
  };
  /** Resolves an entry when its base is here; false when the base has not arrived yet. */
  const resolve = async (e: PackEntry): Promise<boolean> => {
    if (e.kind === "object") {
      await write(e.offset, e.type, e.data);
      return true;
    }
    const baseOid = e.kind === "ofs-delta" ? byOffset.get(e.baseOffset) : types.has(e.baseOid) ? e.baseOid : undefined;
    if (baseOid === undefined) return false;
    const b = await base(baseOid);
    await write(e.offset, b.type, applyDelta(e.data, b.data, req.maxObjectBytes));
    return true;
  };

  for await (const entry of readPack(pack, req.maxObjectBytes)) {
    if (await resolve(entry)) continue;
    pending.push(entry);
    pendingBytes += entry.data.byteLength;
    if (pendingBytes > PENDING_DELTA_BYTES) throw new PackFormatError("too many deltas arrive before their bases");
  }
  // Deltas whose base came later in the pack (or was itself such a delta): resolve until nothing moves.
  while (pending.length > 0) {
    const before = pending.length;
    for (let i = 0; i < pending.length;) {
      if (await resolve(pending[i]!)) pending.splice(i, 1);
      else i++;
    }
    if (pending.length === before) throw new PackFormatError(`${before} deltas name bases the pack does not hold`);
  }
}
