/**
 * Skills store and plugin mirroring on a real `wrangler dev`: upload a plugin of 200 files / 5 MB,
 * enable it, upload it again unchanged and sync. Reports wall times (against a baseline request of
 * the same Worker: `GET /api/plugins`, one authenticated D1 read), the R2 writes each step made
 * (an unchanged re-upload and a sync must write none), and hashing throughput: Beaver's tree
 * hashing (per-file SHA-256 + canonical tree hash, the code the Worker runs) against raw
 * `crypto.subtle.digest` over the same bytes, in this process and as measured inside the Worker.
 */
import { performance } from "node:perf_hooks";
import { packTar } from "modern-tar";
import { manifestEntriesOf, treeHashOf, type TreeFile } from "../src/kernel/content-tree/hashing.ts";
import { startBenchWorker } from "./support.ts";

const SKILLS = 4;
const FILES_PER_SKILL = 50;
const TOTAL_BYTES = 5 * 1024 * 1024;
const BASELINE_SAMPLES = 30;
const HASH_ROUNDS = 10;

const WORDS =
  "skill panel ink sketch outline review merge upstream version mirror plugin safety tree hash learn draft publish rollback workspace agent".split(
    " ",
  );

/** Deterministic prose-like text (compresses like real Markdown, unlike random bytes). */
function text(seed: number, bytes: number): string {
  let x = seed * 2654435761;
  let out = "";
  while (out.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += WORDS[x % WORDS.length] + (x % 13 === 0 ? ".\n" : " ");
  }
  return out.slice(0, bytes);
}

function pluginFiles(): { tar: { name: string; data: string; mode: number }[]; trees: TreeFile[][] } {
  const perFile = Math.floor(TOTAL_BYTES / (SKILLS * FILES_PER_SKILL));
  const tar: { name: string; data: string; mode: number }[] = [];
  const trees: TreeFile[][] = [];
  const skills = Array.from({ length: SKILLS }, (_, i) => `bench-skill-${i}`);
  tar.push({
    name: "bench-plugin/beaver.plugin.json",
    data: JSON.stringify({
      schema_version: 1,
      id: "bench",
      name: "Bench",
      version: "1.0.0",
      skills: skills.map((s) => ({ name: s, path: `skills/${s}` })),
    }),
    mode: 0o644,
  });
  skills.forEach((name, s) => {
    const tree: TreeFile[] = [];
    for (let f = 0; f < FILES_PER_SKILL; f++) {
      const path = f === 0 ? "SKILL.md" : `reference/part-${String(f).padStart(3, "0")}.md`;
      const body =
        f === 0
          ? `---\nname: ${name}\ndescription: Benchmark skill ${s}.\n---\n\n${text(s * 1000 + f, perFile - 80)}`
          : text(s * 1000 + f, perFile);
      tar.push({ name: `bench-plugin/skills/${name}/${path}`, data: body, mode: 0o644 });
      tree.push({ path, bytes: new TextEncoder().encode(body), executable: false });
    }
    trees.push(tree);
  });
  return { tar, trees };
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function hashThroughput(
  trees: TreeFile[][],
): Promise<{ beaverMBs: number; rawPerFileMBs: number; rawSequentialMBs: number; rawWholeMBs: number }> {
  const files = trees.flat();
  const total = files.reduce((n, f) => n + f.bytes.byteLength, 0);
  const whole = new Uint8Array(total);
  let at = 0;
  for (const f of files) {
    whole.set(f.bytes, at);
    at += f.bytes.byteLength;
  }
  const time = async (fn: () => Promise<unknown>) => {
    await fn();
    const t = performance.now();
    for (let i = 0; i < HASH_ROUNDS; i++) await fn();
    return (performance.now() - t) / HASH_ROUNDS;
  };
  const beaver = await time(async () => {
    for (const t of trees) await treeHashOf(await manifestEntriesOf(t));
  });
  // Same shape as Beaver's: every file of a skill digested concurrently, skill after skill.
  const perFile = await time(async () => {
    for (const t of trees) await Promise.all(t.map((f) => crypto.subtle.digest("SHA-256", f.bytes)));
  });
  const sequential = await time(async () => {
    for (const f of files) await crypto.subtle.digest("SHA-256", f.bytes);
  });
  const wholeMs = await time(() => crypto.subtle.digest("SHA-256", whole));
  const mb = total / (1024 * 1024);
  return {
    beaverMBs: mb / (beaver / 1000),
    rawPerFileMBs: mb / (perFile / 1000),
    rawSequentialMBs: mb / (sequential / 1000),
    rawWholeMBs: mb / (wholeMs / 1000),
  };
}

export async function run(): Promise<void> {
  const { tar, trees } = pluginFiles();
  const archive = await gzip(
    await packTar(
      tar.map((e) => ({ header: { name: e.name, size: new TextEncoder().encode(e.data).byteLength, mode: e.mode }, body: e.data })),
    ),
  );
  const rawBytes = trees.flat().reduce((n, f) => n + f.bytes.byteLength, 0);
  console.log(
    `plugin: ${SKILLS} skills, ${SKILLS * FILES_PER_SKILL} files, ${(rawBytes / 1048576).toFixed(2)} MiB unpacked, ${(archive.byteLength / 1048576).toFixed(2)} MiB tar.gz`,
  );

  const dev = await startBenchWorker();
  try {
    const call = async (method: string, path: string, token: string, init: { json?: unknown; bytes?: Uint8Array } = {}) => {
      const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
      let body: BodyInit | undefined;
      if (init.json !== undefined) {
        headers["Content-Type"] = "application/json";
        body = JSON.stringify(init.json);
      } else if (init.bytes) {
        headers["Content-Type"] = "application/gzip";
        body = init.bytes;
      }
      const t = performance.now();
      const res = await fetch(`${dev.url}${path}`, { method, headers, body });
      const text = await res.text();
      const elapsed = performance.now() - t;
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return { elapsed, body: JSON.parse(text) as Record<string, unknown> };
    };
    const id = `bench-${Math.random().toString(36).slice(2, 8)}`;
    await call("POST", "/api/workspaces", dev.adminToken, { json: { id, name: id } });
    const token = (
      (await call("POST", "/api/tokens", dev.adminToken, { json: { name: "bench", scopes: ["admin"], workspace_id: id } })).body as {
        token: string;
      }
    ).token;

    const baseline: number[] = [];
    for (let i = 0; i < BASELINE_SAMPLES + 3; i++) {
      const r = await call("GET", "/api/plugins", token);
      if (i >= 3) baseline.push(r.elapsed);
    }
    const base = median(baseline);

    const upload = await call("PUT", "/api/plugins/packages", token, { bytes: archive });
    const enable = await call("POST", "/api/plugins/bench/enable", token);
    const reupload = await call("PUT", "/api/plugins/packages", token, { bytes: archive });
    const sync = await call("POST", "/api/plugins/sync", token);
    const mirrored = (enable.body.mirrored as unknown[]).length;

    const row = (name: string, r: { elapsed: number }, writes: unknown, extra = "") =>
      console.log(
        `${name.padEnd(34)} ${ms(r.elapsed).padStart(10)}  ×${(r.elapsed / base).toFixed(1).padStart(6)} baseline   R2 writes: ${String(writes).padStart(4)}${extra}`,
      );
    console.log(`baseline GET /api/plugins (median of ${BASELINE_SAMPLES}): ${ms(base)}`);
    row("upload (parse, check, hash, store)", upload, upload.body.r2_writes, `  (blobs ${String(upload.body.blobs_written)})`);
    row(`enable (mirror ${mirrored} skills)`, enable, enable.body.r2_writes);
    row("re-upload unchanged", reupload, reupload.body.r2_writes, `  (blobs ${String(reupload.body.blobs_written)})`);
    row("sync unchanged", sync, sync.body.r2_writes);
    if (reupload.body.r2_writes !== 0 || reupload.body.blobs_written !== 0 || sync.body.r2_writes !== 0)
      console.log("!! an unchanged re-sync wrote to R2");

    const workerHashMs = Number(upload.body.hash_ms);
    const h = await hashThroughput(trees);
    console.log(
      `hashing in the Worker (upload, ${(rawBytes / 1048576).toFixed(2)} MiB): ${ms(workerHashMs)} → ${(rawBytes / 1048576 / (workerHashMs / 1000)).toFixed(0)} MB/s`,
    );
    console.log(`hashing in Node, same code: Beaver tree hashing ${h.beaverMBs.toFixed(0)} MB/s`);
    console.log(
      `  baseline raw digest per file, same concurrency: ${h.rawPerFileMBs.toFixed(0)} MB/s (Beaver ×${(h.beaverMBs / h.rawPerFileMBs).toFixed(2)})`,
    );
    console.log(
      `  raw digest per file, one at a time: ${h.rawSequentialMBs.toFixed(0)} MB/s; raw digest of one 5 MB buffer: ${h.rawWholeMBs.toFixed(0)} MB/s (Beaver ×${(h.beaverMBs / h.rawWholeMBs).toFixed(2)})`,
    );
  } finally {
    await dev.stop();
  }
}
