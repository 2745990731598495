/**
 * Which modules a Worker's startup CPU goes to (issue 27, "Worker startup"; docs/performance.md,
 * "Startup, third pass"). The shipped bundle's top-level code is one script frame in a CPU profile, so
 * its samples cannot be told apart by module. This builds a probe instead: an entry whose only import
 * is a dynamic `import()` of src/index.ts, bundled with the shipped `[alias]` entries and unminified,
 * so esbuild wraps every module in a lazy initialiser named by its path and the profile's stacks carry
 * one frame per module being evaluated. Each sample goes to the innermost module on its stack (self
 * time; the zod schemas a module builds at its top level count as that module's). The wrappers add a
 * few percent and V8 bills compiling a module's body to the module that imports it, so the figures
 * say where, not exactly how much; the shipped startup total is `startupFigures`' (bench/startup.ts).
 * Used by `npm run bench -- bundle` with BENCH_BUNDLE_STARTUP_TOP=N.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ownerOf } from "./source-owner.ts";
import { busySamples, type CpuProfile } from "./cpu-profile.ts";

/** A module initialiser's name: esbuild names each wrapped module's function by its path. */
const MODULE = /^(?:[./]*\/)?(?:work\/[^/]+\/)?.*?((?:src|node_modules|skills)\/.+)$/;

/** Self time per module (ms summed over `profiles`), keyed by path from the repository; `busy` is every non-idle sample. */
export function moduleSelfTimes(profiles: CpuProfile[]): { byModule: Map<string, number>; busy: number } {
  const byModule = new Map<string, number>();
  let busy = 0;
  for (const p of profiles) {
    for (const { leaf, stack, ms } of busySamples(p)) {
      busy += ms;
      let key = `(outside any module: ${leaf.callFrame.functionName || "anonymous"})`;
      for (const n of stack) {
        const m = MODULE.exec(n.callFrame.functionName);
        if (m && /\.(m?js|cjs|ts|json)$/.test(m[1]!)) {
          key = m[1]!;
          break;
        }
      }
      byModule.set(key, (byModule.get(key) ?? 0) + ms);
    }
  }
  return { byModule, busy };
}

/** The shipped wrangler.toml's `[alias]` section with its relative targets made absolute (the probe lives elsewhere). */
function aliasSection(root: string): string {
  const section = /^\[alias\]\n([\s\S]*?)(?=^\[)/m.exec(readFileSync(join(root, "wrangler.toml"), "utf8"))?.[1] ?? "";
  return section.replace(/= "\.\/([^"]+)"/g, (_, p: string) => `= ${JSON.stringify(resolve(root, p))}`);
}

/** Builds the probe, profiles its startup `times` times and prints the top `n` modules and packages by self time. */
export function printStartupSources(wrangler: string, root: string, times: number, n: number): void {
  const dir = mkdtempSync(join(tmpdir(), "beaver-startup-probe-"));
  const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  try {
    const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
    const date = /^compatibility_date = .*$/m.exec(toml)?.[0] ?? "";
    const flags = /^compatibility_flags = .*$/m.exec(toml)?.[0] ?? "";
    writeFileSync(
      join(dir, "entry.ts"),
      `const worker = import(${JSON.stringify(join(root, "src/index.ts"))});\n` +
        `export default { fetch: async (r: Request, e: unknown, c: ExecutionContext) => ((await worker).default.fetch as any)(r, e, c) };\n`,
    );
    writeFileSync(
      join(dir, "wrangler.toml"),
      `name = "startup-probe"\nmain = "entry.ts"\n${date}\n${flags}\nkeep_names = false\n[alias]\n${aliasSection(root)}`,
    );
    const bundle = join(dir, "probe.bundle");
    execFileSync(wrangler, ["deploy", "--dry-run", "--config", join(dir, "wrangler.toml"), "--outfile", bundle, "--minify=false"], {
      cwd: root,
      env,
      stdio: "pipe",
    });
    const profiles: CpuProfile[] = [];
    for (let i = 0; i < times; i++) {
      const out = join(dir, `probe-${i}.cpuprofile`);
      try {
        execFileSync(wrangler, ["check", "startup", "--worker", bundle, "--outfile", out], { cwd: root, env, stdio: "pipe" });
        profiles.push(JSON.parse(readFileSync(out, "utf8")) as CpuProfile);
      } catch {
        console.log(`probe ${i + 1}: not measured (wrangler check startup failed or timed out)`);
      }
    }
    if (profiles.length === 0) return;
    const { byModule, busy } = moduleSelfTimes(profiles);
    const byOwner = new Map<string, number>();
    for (const [k, v] of byModule) {
      const owner = k.startsWith("src/") ? k : ownerOf(k);
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + v);
    }
    const per = (ms: number) => `${(ms / profiles.length).toFixed(1)} ms`.padStart(10);
    console.log(
      `\nstartup probe (every module wrapped, unminified; mean of ${profiles.length}): ${per(busy).trim()} busy; self time by Beaver file or package:`,
    );
    for (const [k, v] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${per(v)}  ${k}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
