/**
 * What a cold isolate costs each side of `npm run bench:peers` (issue 27): the Worker's startup CPU,
 * from `wrangler check startup` (a V8 CPU profile of the startup phase, run locally), and the size of
 * the bundle `wrangler deploy --dry-run` writes, raw and gzipped (what the platform's limit counts).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { busySamples, type CpuProfile } from "./cpu-profile.ts";

export interface StartupFigures {
  /** CPU ms in the startup profile's samples, idle excluded. */
  startupMs: number;
  /** Of which in the Worker's own bundle (module evaluation), not the runtime's internals or GC. */
  bundleMs: number;
  rawBytes: number;
  gzipBytes: number;
}

/** CPU in the profile's busy samples (idle excluded), and the share under the bundle's script (`bundleName`). */
export function profileTimes(p: CpuProfile, bundleName: string): { total: number; bundle: number } {
  let total = 0;
  let bundle = 0;
  for (const s of busySamples(p)) {
    total += s.ms;
    if (s.stack.some((n) => n.callFrame.url.endsWith(bundleName))) bundle += s.ms;
  }
  return { total, bundle };
}

/** The bundle `wrangler deploy --dry-run` writes for `config` (a path from `cwd`): raw and gzipped bytes over every uploaded module. */
export function bundleSize(wrangler: string, cwd: string, config: string): { rawBytes: number; gzipBytes: number } {
  const dir = mkdtempSync(join(tmpdir(), "beaver-bundle-"));
  try {
    const out = join(dir, "bundle");
    execFileSync(wrangler, ["deploy", "--dry-run", "--outdir", out, "--config", config], { cwd, env: quietEnv(), stdio: "pipe" });
    const files = readdirSync(out).filter((f) => /\.(m?js|wasm)$/.test(f));
    const rawBytes = files.reduce((n, f) => n + statSync(join(out, f)).size, 0);
    const gzipBytes = files.reduce((n, f) => n + gzipSync(readFileSync(join(out, f))).byteLength, 0);
    return { rawBytes, gzipBytes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One `wrangler check startup` profile: CPU in its samples, idle excluded, and the bundle's share. */
export function startupProfile(wrangler: string, cwd: string, config: string): Pick<StartupFigures, "startupMs" | "bundleMs"> {
  const dir = mkdtempSync(join(tmpdir(), "beaver-startup-"));
  try {
    const profilePath = join(dir, "startup.cpuprofile");
    execFileSync(wrangler, ["check", "startup", "--config", config, "--outfile", profilePath], { cwd, env: quietEnv(), stdio: "pipe" });
    const times = profileTimes(JSON.parse(readFileSync(profilePath, "utf8")) as CpuProfile, "index.js");
    return { startupMs: times.total, bundleMs: times.bundle };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function quietEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
}
