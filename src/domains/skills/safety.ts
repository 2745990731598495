/**
 * The deterministic static safety checker. It reads a skill tree and reports findings at four
 * levels: pass < warn < fail < critical. `fail` and `critical` block publication (a skill upload,
 * a plugin enable, a draft's publish — a plugin update whose upstream fails is still recorded as a
 * draft, for review, but never becomes a version). Same input → same report: no model, no network,
 * no clock.
 *
 * Rules: hidden or bidirectional Unicode, prompt-injection markers, secrets (these three from
 * kernel/prompt-guard.ts, shared with memory and tool results), dangerous script patterns, native
 * executables and oversize files/trees. Binary files are only checked for size and
 * for being native executables.
 */
import type { TreeFile } from "../../kernel/content-tree/hashing.ts";
import { GUARD_PATTERNS } from "../../kernel/prompt-guard.ts";

export type SafetyLevel = "pass" | "warn" | "fail" | "critical";
export type SafetyRule = "hidden_unicode" | "prompt_injection" | "secret" | "dangerous_script" | "native_executable" | "oversize";

export interface SafetyFinding {
  level: Exclude<SafetyLevel, "pass">;
  rule: SafetyRule;
  path: string;
  line?: number;
  message: string;
}

export interface SafetyReport {
  level: SafetyLevel;
  findings: SafetyFinding[];
}

export const SAFETY_LIMITS = {
  maxFileBytes: 5 * 1024 * 1024,
  maxSkillMdBytes: 512 * 1024,
  warnSkillMdBytes: 100 * 1024,
  maxTreeBytes: 20 * 1024 * 1024,
  maxFiles: 1000,
  /** Findings kept per rule and file, so a noisy file cannot bloat the report. */
  maxFindingsPerRuleAndFile: 5,
};

const RANK: Record<SafetyLevel, number> = { pass: 0, warn: 1, fail: 2, critical: 3 };

export function maxLevel(a: SafetyLevel, b: SafetyLevel): SafetyLevel {
  return RANK[a] >= RANK[b] ? a : b;
}

export function blocksPublication(level: SafetyLevel): boolean {
  return level === "fail" || level === "critical";
}

interface LinePattern {
  rule: SafetyRule;
  re: RegExp;
  /** Level in documentation (markdown etc.) and in scripts. */
  doc: SafetyFinding["level"];
  script: SafetyFinding["level"];
  message: string;
}

/** Hidden Unicode, prompt injection and secrets come from the one kernel list (kernel/prompt-guard.ts); scripts are ours. */
const PATTERNS: LinePattern[] = [
  ...GUARD_PATTERNS,
  // Dangerous commands.
  {
    rule: "dangerous_script",
    re: /\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+|-[a-zA-Z]*f[a-zA-Z]*\s+)+(\/(\*|\s|$)|~\/?(\s|$)|\$HOME\/?(\s|$)|\/\*)/,
    doc: "critical",
    script: "critical",
    message: "recursive delete of / or home",
  },
  {
    rule: "dangerous_script",
    re: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/,
    doc: "critical",
    script: "critical",
    message: "fork bomb",
  },
  {
    rule: "dangerous_script",
    re: /\bmkfs(\.\w+)?\s+\/dev\/|\bdd\s+[^\n]*\bof=\/dev\/(sd|nvme|hd|disk|xvd)/,
    doc: "critical",
    script: "critical",
    message: "writes a raw disk device",
  },
  {
    rule: "dangerous_script",
    re: /\/dev\/tcp\/|\bnc\s+(-\w+\s+)*-e\s|\bbash\s+-i\s+>&/,
    doc: "critical",
    script: "critical",
    message: "reverse shell pattern",
  },
  {
    rule: "dangerous_script",
    re: /\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/,
    doc: "warn",
    script: "fail",
    message: "pipes a download into a shell",
  },
  {
    rule: "dangerous_script",
    re: /\bbase64\s+(-d|--decode|-D)\b[^|\n]*\|\s*(sudo\s+)?(ba|z)?sh\b|\beval\s+["']?\$\((curl|wget)\b/,
    doc: "fail",
    script: "fail",
    message: "executes decoded or downloaded code",
  },
  { rule: "dangerous_script", re: /\bchmod\s+(-R\s+)?0?777\b/, doc: "warn", script: "warn", message: "world-writable permissions" },
];

const SCRIPT_EXT = /\.(sh|bash|zsh|fish|py|js|mjs|cjs|ts|rb|pl|php|ps1|bat|cmd)$/i;

function isScript(f: TreeFile): boolean {
  return f.executable || SCRIPT_EXT.test(f.path);
}

/** Text (UTF-8, no NUL in the first 8 KiB) or null for binary content. */
export function decodeText(bytes: Uint8Array): string | null {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

function nativeExecutableKind(bytes: Uint8Array): string | null {
  const b = bytes;
  if (b.length >= 4 && b[0] === 0x7f && b[1] === 0x45 && b[2] === 0x4c && b[3] === 0x46) return "ELF";
  if (b.length >= 4) {
    const magic = ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
    if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe].includes(magic)) return "Mach-O";
  }
  if (b.length >= 64 && b[0] === 0x4d && b[1] === 0x5a) {
    const peOffset = (b[60]! | (b[61]! << 8) | (b[62]! << 16) | (b[63]! << 24)) >>> 0;
    if (peOffset + 4 <= b.length && b[peOffset] === 0x50 && b[peOffset + 1] === 0x45 && b[peOffset + 2] === 0 && b[peOffset + 3] === 0)
      return "PE";
  }
  return null;
}

function checkSizes(files: readonly TreeFile[], out: SafetyFinding[]): void {
  let total = 0;
  for (const f of files) {
    total += f.bytes.byteLength;
    if (f.path === "SKILL.md") {
      if (f.bytes.byteLength > SAFETY_LIMITS.maxSkillMdBytes)
        out.push({
          level: "fail",
          rule: "oversize",
          path: f.path,
          message: `SKILL.md is ${f.bytes.byteLength} bytes (limit ${SAFETY_LIMITS.maxSkillMdBytes})`,
        });
      else if (f.bytes.byteLength > SAFETY_LIMITS.warnSkillMdBytes)
        out.push({
          level: "warn",
          rule: "oversize",
          path: f.path,
          message: `SKILL.md is ${f.bytes.byteLength} bytes; agents load it whole`,
        });
    } else if (f.bytes.byteLength > SAFETY_LIMITS.maxFileBytes) {
      out.push({
        level: "fail",
        rule: "oversize",
        path: f.path,
        message: `file is ${f.bytes.byteLength} bytes (limit ${SAFETY_LIMITS.maxFileBytes})`,
      });
    }
  }
  if (total > SAFETY_LIMITS.maxTreeBytes)
    out.push({ level: "fail", rule: "oversize", path: ".", message: `skill is ${total} bytes (limit ${SAFETY_LIMITS.maxTreeBytes})` });
  if (files.length > SAFETY_LIMITS.maxFiles)
    out.push({ level: "fail", rule: "oversize", path: ".", message: `skill has ${files.length} files (limit ${SAFETY_LIMITS.maxFiles})` });
}

function checkText(f: TreeFile, text: string, out: SafetyFinding[]): void {
  const script = isScript(f);
  let lines: string[] | undefined;
  for (const p of PATTERNS) {
    // One pass over the whole text first: most patterns never match, and lines are split only when needed.
    if (!p.re.test(text)) continue;
    lines ??= text.split("\n");
    let n = 0;
    for (let i = 0; i < lines.length && n < SAFETY_LIMITS.maxFindingsPerRuleAndFile; i++) {
      if (!p.re.test(lines[i] ?? "")) continue;
      n++;
      out.push({ level: script ? p.script : p.doc, rule: p.rule, path: f.path, line: i + 1, message: p.message });
    }
  }
}

/** Check a whole skill tree (paths relative to the skill root). */
export function checkSkillSafety(files: readonly TreeFile[]): SafetyReport {
  const findings: SafetyFinding[] = [];
  checkSizes(files, findings);
  for (const f of files) {
    const text = decodeText(f.bytes);
    if (text === null) {
      const kind = nativeExecutableKind(f.bytes);
      if (kind) findings.push({ level: "fail", rule: "native_executable", path: f.path, message: `${kind} native executable` });
      continue;
    }
    checkText(f, text, findings);
  }
  const level = findings.reduce<SafetyLevel>((acc, x) => maxLevel(acc, x.level), "pass");
  return { level, findings };
}
