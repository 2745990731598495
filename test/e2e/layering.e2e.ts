/**
 * The layering rule (docs/layering.md, `.dependency-cruiser.cjs`) can fail: run in Node beside the
 * e2e suite, it checks a throw-away tree with an upward import, a sibling-domain import, a cycle and
 * a deep import into the runtime past its entry, and finds each one, while the real `src/` passes.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** Runs the rule over `dir`/src and returns its violations (the CLI exits non-zero when there are any). */
function cruise(dir: string): Violation[] {
  let out: string;
  try {
    // The JSON report lists every module and dependency: past execFileSync's default 1 MiB buffer since src/ grew.
    out = execFileSync(process.execPath, [CLI, "src", "--config", CONFIG, "--output-type", "json"], {
      cwd: dir,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    out = (err as { stdout: string }).stdout;
  }
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "beaver-layers-"));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("the layering rule", () => {
  it("refuses an upward import, a sibling domain and a cycle, and names the rule each breaks", () => {
    const dir = tree({
      "src/kernel/ids.ts": 'import { route } from "../edge/route.ts";\nexport const id = route;\n',
      "src/edge/route.ts": "export const route = 1;\n",
      "src/domains/mail/send.ts": 'import { task } from "../toolchain/task.ts";\nexport const send = task;\n',
      "src/domains/toolchain/task.ts": "export const task = 1;\n",
      "src/runtime/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
      "src/runtime/b.ts": 'import { a } from "./a.ts";\nexport const b = () => a;\n',
      "src/domains/toolchain/ok.ts": 'import { id } from "../../kernel/ids.ts";\nexport const ok = id;\n',
      // The runtime's entry (src/runtime/index.ts) and what it re-exports from inside the runtime.
      "src/runtime/session/client.ts": "export const client = 1;\n",
      "src/runtime/tools/spec.ts": "export const spec = 1;\n",
      "src/runtime/index.ts": 'export { client } from "./session/client.ts";\nexport { spec } from "./tools/spec.ts";\n',
      "src/domains/mail/via-entry.ts": 'import { client } from "../../runtime/index.ts";\nexport const viaEntry = client;\n',
      "src/domains/mail/deep.ts": 'import { spec } from "../../runtime/tools/spec.ts";\nexport const deep = spec;\n',
      "src/edge/deep.ts": 'import type { client } from "../runtime/session/client.ts";\nexport type Deep = typeof client;\n',
    });
    try {
      const found = cruise(dir).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
      expect(found).toContain("layer-kernel: src/kernel/ids.ts -> src/edge/route.ts");
      expect(found).toContain("domain-mail: src/domains/mail/send.ts -> src/domains/toolchain/task.ts");
      expect(found.some((v) => v.startsWith("no-circular: src/runtime/"))).toBe(true);
      expect(found.filter((v) => v.includes("ok.ts"))).toEqual([]);
      // Past the runtime's entry: refused from a domain and from the edge (type-only imports too).
      expect(found).toContain("runtime-entry: src/domains/mail/deep.ts -> src/runtime/tools/spec.ts");
      expect(found).toContain("runtime-entry: src/edge/deep.ts -> src/runtime/session/client.ts");
      expect(found.filter((v) => v.includes("via-entry.ts") || v.startsWith("runtime-entry: src/runtime/"))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("holds for Beaver's own src/", () => {
    expect(cruise(ROOT)).toEqual([]);
  });
});
