/**
 * Changes a reviewer must acknowledge one by one before a draft can be approved (docs/learning.md,
 * "Gates"): an upstream addition the merged text dropped (the preservation report's lost upstream
 * units), and any change to a `Safety` or `Required Tools` section of SKILL.md against the current
 * version (a section added, removed or edited). Pure: texts and reports in, items with stable ids out.
 */
import type { PreservationReport } from "./preservation.ts";

export interface SensitiveItem {
  /** What the approval's `acknowledge` names: `dropped_upstream:<n>`, `section:safety`, `section:required-tools`. */
  id: string;
  kind: "dropped_upstream" | "safety_section" | "required_tools_section";
  message: string;
}

const SECTIONS = [
  { id: "section:safety", kind: "safety_section", re: /^safety\b/i, title: "Safety" },
  { id: "section:required-tools", kind: "required_tools_section", re: /^required[\s_-]*tools\b/i, title: "Required Tools" },
] as const;

/** The text of the first section whose heading matches `re` (heading line to the next heading of the same or a higher level), or null. */
export function sectionText(markdown: string, re: RegExp): string | null {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let fence = false;
  let start = -1;
  let level = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim().startsWith("```")) fence = !fence;
    if (fence) continue;
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!h) continue;
    if (start >= 0 && h[1]!.length <= level) return norm(lines.slice(start, i).join("\n"));
    if (start < 0 && re.test(h[2]!.trim())) [start, level] = [i, h[1]!.length];
  }
  return start >= 0 ? norm(lines.slice(start).join("\n")) : null;
}

const norm = (t: string) =>
  t
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n")
    .trim();

export function sensitiveChanges(current: string | null, draft: string, preservation: PreservationReport | null): SensitiveItem[] {
  const items: SensitiveItem[] = [];
  (preservation?.upstream ?? []).forEach((u, i) => {
    if (u.kept === "lost")
      items.push({ id: `dropped_upstream:${i}`, kind: "dropped_upstream", message: `the draft drops the upstream addition "${u.text}"` });
  });
  for (const s of SECTIONS) {
    const before = current === null ? null : sectionText(current, s.re);
    const after = sectionText(draft, s.re);
    if (before === after) continue;
    const what = before === null ? "adds" : after === null ? "removes" : "changes";
    items.push({ id: s.id, kind: s.kind, message: `the draft ${what} the ${s.title} section` });
  }
  return items;
}
