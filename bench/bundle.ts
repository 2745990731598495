/**
 * `npm run bench -- bundle`: what the deployed bundle is made of (issue 27, "bundle ≤ 1.0 MiB gzip").
 * Builds the shipped wrangler.toml with `wrangler deploy --dry-run --metafile`, attributes every byte
 * of the minified output to its source through the source map, and prints the contributors by
 * package: raw bytes, and each package's bytes gzipped on their own (the "alone" column; the sum of
 * those is a few percent above the whole file's gzip, because a package compresses against itself
 * only). The total is what wrangler prints and the platform's limit counts.
 *
 * It also checks the `[alias]` entries whose key is a relative specifier (wrangler matches the
 * specifier as written, from any importer): each must be imported only by the package named for it
 * below, or the bench fails (docs/performance.md, "The bundle").
 *
 * BENCH_BUNDLE_TOP=N rows (default 30); BENCH_BUNDLE_STARTUP=N also profiles the Worker's startup N
 * times (`wrangler check startup` on the same build) and prints each figure and the median;
 * BENCH_BUNDLE_STARTUP_TOP=N then profiles a probe build of the same sources as many times and prints
 * the N Beaver files and packages with the most startup self time (bench/startup-sources.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { profileTimes } from "./startup.ts";
import { printStartupSources } from "./startup-sources.ts";
import { ownerOf } from "./source-owner.ts";

/** Relative `[alias]` keys and the only package directory allowed to import each. */
const RELATIVE_ALIAS_OWNERS: Record<string, string> = { "../locales/index.js": "node_modules/zod/" };

interface Metafile {
  inputs: Record<string, { imports: { path: string; kind: string; original?: string }[] }>;
}

interface SourceMap {
  sources: string[];
  mappings: string;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DIGIT = new Map([...B64].map((c, i) => [c, i]));

/** One source map segment's fields (base64 VLQ). */
function vlq(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const c of segment) {
    const d = DIGIT.get(c) ?? 0;
    value += (d & 31) << shift;
    if (d & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

export interface Contributor {
  owner: string;
  rawBytes: number;
  gzipAloneBytes: number;
}

/** Every byte of `code` attributed to the owner of the source its mapping names, grouped and gzipped per owner. */
export function contributors(code: string, map: SourceMap): Contributor[] {
  const chunks = new Map<string, string[]>();
  const add = (owner: string, text: string) => {
    if (!text) return;
    const list = chunks.get(owner) ?? [];
    list.push(text);
    chunks.set(owner, list);
  };
  const lines = code.split("\n");
  const mapped = map.mappings.split(";");
  let source = 0;
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li]!;
    let col = 0;
    let from = 0;
    let owner = "(unmapped)";
    for (const seg of (mapped[li] ?? "").split(",")) {
      if (!seg) continue;
      const f = vlq(seg);
      col += f[0]!;
      if (f.length > 1) source += f[1]!;
      add(owner, line.slice(from, col));
      from = col;
      owner = f.length > 1 ? ownerOf(map.sources[source]!) : "(unmapped)";
    }
    add(owner, `${line.slice(from)}\n`);
  }
  return [...chunks]
    .map(([owner, parts]) => {
      const text = parts.join("");
      return { owner, rawBytes: Buffer.byteLength(text), gzipAloneBytes: gzipSync(text).byteLength };
    })
    .sort((a, b) => b.gzipAloneBytes - a.gzipAloneBytes);
}

/** The `[alias]` keys of a wrangler.toml (one `"key" = "value"` per line, as ours writes them). */
function aliasKeys(toml: string): string[] {
  const section = /^\[alias\]\n([\s\S]*?)(?=^\[)/m.exec(toml)?.[1] ?? "";
  return [...section.matchAll(/^"([^"]+)"\s*=/gm)].map((m) => m[1]!);
}

/** Importers of a relative alias key outside the package it is meant for (should be none). */
function strayImporters(meta: Metafile, key: string, owner: string | undefined): string[] {
  const out: string[] = [];
  for (const [file, input] of Object.entries(meta.inputs))
    for (const imp of input.imports) if (imp.original === key && (!owner || !file.includes(owner))) out.push(file);
  return out;
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);

export async function run(): Promise<void> {
  const wrangler = join(process.cwd(), "node_modules/.bin/wrangler");
  const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  const dir = mkdtempSync(join(tmpdir(), "beaver-bundle-"));
  try {
    const out = join(dir, "out");
    const metaPath = join(dir, "meta.json");
    execFileSync(wrangler, ["deploy", "--dry-run", "--outdir", out, "--metafile", metaPath], { env, stdio: "pipe" });
    const code = readFileSync(join(out, "index.js"), "utf8");
    const map = JSON.parse(readFileSync(join(out, "index.js.map"), "utf8")) as SourceMap;
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as Metafile;

    const total = gzipSync(code).byteLength;
    const rows = contributors(code, map);
    const aloneSum = rows.reduce((n, r) => n + r.gzipAloneBytes, 0);
    console.log(`shipped wrangler.toml, dry run: index.js ${kib(Buffer.byteLength(code))} raw, ${kib(total)} gzip`);
    console.log(`${pad("package", 40)}${lpad("raw", 12)}${lpad("gzip alone", 13)}${lpad("share", 8)}`);
    for (const r of rows.slice(0, Number(process.env.BENCH_BUNDLE_TOP ?? 30)))
      console.log(
        `${pad(r.owner, 40)}${lpad(kib(r.rawBytes), 12)}${lpad(kib(r.gzipAloneBytes), 13)}${lpad(`${((100 * r.gzipAloneBytes) / aloneSum).toFixed(1)}%`, 8)}`,
      );

    const keys = aliasKeys(readFileSync("wrangler.toml", "utf8"));
    let stray = 0;
    for (const key of keys.filter((k) => k.startsWith("."))) {
      const found = strayImporters(meta, key, RELATIVE_ALIAS_OWNERS[key]);
      if (!RELATIVE_ALIAS_OWNERS[key]) console.error(`[alias] "${key}" is relative and has no owner in bench/bundle.ts`);
      for (const f of found) console.error(`[alias] "${key}" is also imported by ${f}, which the alias would break`);
      stray += found.length + (RELATIVE_ALIAS_OWNERS[key] ? 0 : 1);
    }
    console.log(`[alias]: ${keys.length} entries; relative keys imported only by their owner: ${stray === 0 ? "yes" : "NO"}`);
    if (stray > 0) process.exitCode = 1;

    const times = Number(process.env.BENCH_BUNDLE_STARTUP ?? 0);
    if (times > 0) {
      const bundle = join(dir, "worker.bundle");
      execFileSync(wrangler, ["deploy", "--dry-run", "--outfile", bundle], { env, stdio: "pipe" });
      const figures: { total: number; bundle: number }[] = [];
      for (let i = 0; i < times; i++) {
        const profile = join(dir, `startup-${i}.cpuprofile`);
        try {
          execFileSync(wrangler, ["check", "startup", "--worker", bundle, "--outfile", profile], { env, stdio: "pipe" });
        } catch {
          console.log(`startup ${i + 1}: not measured (wrangler check startup failed or timed out)`);
          continue;
        }
        const t = profileTimes(JSON.parse(readFileSync(profile, "utf8")) as Parameters<typeof profileTimes>[0], "index.js");
        figures.push(t);
        console.log(`startup ${i + 1}: ${t.total.toFixed(0)} ms CPU (module evaluation ${t.bundle.toFixed(0)} ms)`);
      }
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
      if (figures.length > 0)
        console.log(
          `startup median of ${figures.length}: ${median(figures.map((f) => f.total)).toFixed(0)} ms (module evaluation ${median(figures.map((f) => f.bundle)).toFixed(0)} ms)`,
        );
      const top = Number(process.env.BENCH_BUNDLE_STARTUP_TOP ?? 0);
      if (top > 0) printStartupSources(wrangler, process.cwd(), times, top);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
