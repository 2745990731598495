/**
 * The one list of text patterns that must not reach a model's prompt unnoticed (README "Security",
 * issue 25): secrets in their providers' real formats, instruction-override and role-tag phrasings,
 * and hidden Unicode. Every store of text that is pasted into a prompt uses it — the skills' static
 * safety check (skills, plugins, drafts, `skill_propose`), curated memory (refused on write and
 * withheld again when a run's snapshot is built), and tool results (`redactSecrets`). Pure: same
 * text → same findings.
 *
 * Levels are the skills' checker's (docs/learning.md): `doc` applies to documentation, `script` to
 * scripts; `fail` and `critical` block a skill, `warn` flags it. Memory refuses every finding.
 */

export type GuardLevel = "warn" | "fail" | "critical";
export type GuardRule = "hidden_unicode" | "prompt_injection" | "secret";

export interface GuardPattern {
  rule: GuardRule;
  /** Not global: `test` keeps no state. A secret pattern's value is its `secret` group when it has one, else the whole match. */
  re: RegExp;
  doc: GuardLevel;
  script: GuardLevel;
  message: string;
}

export interface GuardFinding {
  rule: GuardRule;
  level: GuardLevel;
  message: string;
}

const HIDDEN_UNICODE: GuardPattern[] = [
  // Unicode smuggling and Trojan Source.
  {
    rule: "hidden_unicode",
    re: /[\u{E0000}-\u{E007F}]/u,
    doc: "critical",
    script: "critical",
    message: "Unicode tag characters (invisible text)",
  },
  {
    rule: "hidden_unicode",
    re: /[\u202A-\u202E\u2066-\u2069]/,
    doc: "critical",
    script: "critical",
    message: "bidirectional override/isolate control character",
  },
  {
    rule: "hidden_unicode",
    re: /[\u200B\u200C\u2060\u180E\u00AD]|(?<!^)\uFEFF/,
    doc: "warn",
    script: "fail",
    message: "zero-width or invisible formatting character",
  },
  {
    rule: "hidden_unicode",
    re: /(?<![\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}\uFE0F])\u200D|\u200D(?![\p{Extended_Pictographic}])/u,
    doc: "warn",
    script: "fail",
    message: "zero-width joiner outside an emoji sequence",
  },
];

const INJECTION: GuardPattern[] = [
  {
    rule: "prompt_injection",
    re: /\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|system)\s+(instructions|prompts?|rules|directions|messages)\b/i,
    doc: "fail",
    script: "fail",
    message: "instruction-override phrase",
  },
  {
    rule: "prompt_injection",
    re: /\b(reveal|print|output|leak|exfiltrate)\s+(the\s+|your\s+)(system\s+prompt|hidden\s+instructions|secrets|api\s+keys?)\b/i,
    doc: "fail",
    script: "fail",
    message: "request to disclose hidden instructions or secrets",
  },
  // Softer phrasings: common in ordinary prose too, so a skill is flagged (warn), while memory refuses them.
  {
    rule: "prompt_injection",
    re: /\b(ignore|disregard|forget)\s+(all\s+|everything\s+)?(previous|prior|above|earlier|preceding)\b(?!\s+(instructions|prompts?|rules|directions|messages)\b)/i,
    doc: "warn",
    script: "warn",
    message: "instruction-override phrase (ignore previous)",
  },
  { rule: "prompt_injection", re: /\byou\s+are\s+now\b/i, doc: "warn", script: "warn", message: "role reassignment ('you are now')" },
  {
    rule: "prompt_injection",
    re: /\b(developer|dev|god|jailbreak|jailbroken|DAN|unrestricted|unfiltered)\s+mode\b/i,
    doc: "warn",
    script: "warn",
    message: "jailbreak mode phrase",
  },
  {
    rule: "prompt_injection",
    re: /\b(reveal|print|output|leak|exfiltrate|dump)\s+(all\s+(of\s+)?(the\s+|your\s+)?)?(system\s+prompt|hidden\s+instructions|secrets|api\s+keys?|credentials|passwords)\b/i,
    doc: "warn",
    script: "warn",
    message: "asks to disclose secrets",
  },
  {
    rule: "prompt_injection",
    re: /(^|[\n\r])[ \t]*(#+[ \t]*)?\[?(system|assistant|developer)\]?[ \t]*:/i,
    doc: "warn",
    script: "warn",
    message: "role tag at the start of a line",
  },
  {
    rule: "prompt_injection",
    re: /<\/?(system|assistant|developer|system[_-]prompt)>/i,
    doc: "warn",
    script: "warn",
    message: "role tag markup",
  },
  {
    rule: "prompt_injection",
    re: /<\|(im_start|im_end|endoftext|system|user|assistant)\|>|\[\/?INST\]|<<\/?SYS>>/,
    doc: "warn",
    script: "warn",
    message: "chat-template control token",
  },
  {
    rule: "prompt_injection",
    re: /\b(do\s+not|don't|never)\s+(tell|inform|show|mention\s+(this\s+)?to)\s+the\s+user\b/i,
    doc: "warn",
    script: "warn",
    message: "asks to hide actions from the user",
  },
];

/**
 * Providers' key formats (as they issue them today): a key of any of these shapes is refused in a skill
 * or memory and redacted from tool results. Sample keys of each format: test/kernel/prompt-guard.pure.test.ts.
 */
const SECRETS: GuardPattern[] = [
  {
    rule: "secret",
    re: /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----(?:[\s\S]*?-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----)?/,
    doc: "critical",
    script: "critical",
    message: "private key (PEM)",
  },
  { rule: "secret", re: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/, doc: "critical", script: "critical", message: "AWS access key id" },
  {
    rule: "secret",
    re: /\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}\b/,
    doc: "critical",
    script: "critical",
    message: "GitHub token",
  },
  { rule: "secret", re: /\bxox[baprs]-[A-Za-z0-9]{10,}-[A-Za-z0-9-]{10,}/, doc: "critical", script: "critical", message: "Slack token" },
  // sk-ant-api03-…, sk-ant-admin01-…
  { rule: "secret", re: /\bsk-ant-[a-z0-9]{2,10}-[A-Za-z0-9_-]{20,}/, doc: "critical", script: "critical", message: "Anthropic API key" },
  // sk-…(legacy 48), sk-proj-…, sk-svcacct-…, sk-admin-…: random characters, so at least one digit among 20 or more.
  {
    rule: "secret",
    re: /\bsk-(?:proj-|svcacct-|admin-|None-)?(?=[A-Za-z0-9_-]{0,300}\d)[A-Za-z0-9_-]{20,}/,
    doc: "critical",
    script: "critical",
    message: "OpenAI-style API key",
  },
  { rule: "secret", re: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/, doc: "critical", script: "critical", message: "Google API key" },
  // Gitea tokens are 40 hex characters with no prefix — a commit id's shape — so only where a token is named.
  {
    rule: "secret",
    re: /\b(?:(?:gitea[_-]?)?(?:access[_-]?)?token|authorization)["']?\s*[:=]?\s*["']?(?:(?:token|bearer)\s+)?(?<secret>[0-9a-f]{40})\b/i,
    doc: "critical",
    script: "critical",
    message: "Gitea access token",
  },
  {
    rule: "secret",
    re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
    doc: "critical",
    script: "critical",
    message: "JSON Web Token",
  },
  {
    rule: "secret",
    re: /\b(api[_-]?key|secret|token|passw(or)?d)["']?\s*[:=]\s*["'](?<secret>[A-Za-z0-9/+_=.-]{24,})["']/i,
    doc: "warn",
    script: "warn",
    message: "literal credential assignment",
  },
];

export const GUARD_PATTERNS: readonly GuardPattern[] = [...HIDDEN_UNICODE, ...INJECTION, ...SECRETS];

/** Every pattern `text` matches, at its documentation level, one finding per pattern. */
export function guardFindings(text: string): GuardFinding[] {
  return GUARD_PATTERNS.filter((p) => p.re.test(text)).map((p) => ({ rule: p.rule, level: p.doc, message: p.message }));
}

/** What replaces a secret in text that goes on to a model or a user. */
export const REDACTED = "[redacted]";

const GLOBAL_SECRETS = SECRETS.map((p) => new RegExp(p.re.source, p.re.flags.includes("g") ? p.re.flags : `${p.re.flags}g`));

/** `text` with every secret-shaped value replaced by `[redacted]` (only the value, where a pattern names it). */
export function redactSecrets(text: string): string {
  let out = text;
  for (const re of GLOBAL_SECRETS) {
    out = out.replace(re, (match: string, ...rest: unknown[]) => {
      const groups = rest[rest.length - 1];
      const secret = typeof groups === "object" && groups !== null ? (groups as { secret?: string }).secret : undefined;
      if (!secret) return REDACTED;
      const at = match.lastIndexOf(secret);
      return match.slice(0, at) + REDACTED + match.slice(at + secret.length);
    });
  }
  return out;
}
