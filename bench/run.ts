/**
 * `npm run bench`: runs every area's benchmark in turn. Each prints its figures as ratios against a
 * baseline measured in the same run, never as pass/fail thresholds.
 */
const areas: { name: string; load: () => Promise<{ run(): Promise<void> }> }[] = [
  { name: "sessions", load: () => import("./sessions.ts") },
  { name: "session-context", load: () => import("./session-context.ts") },
  { name: "compaction", load: () => import("./compaction.ts") },
  { name: "prompt", load: () => import("./prompt.ts") },
  { name: "agent-raw-tool-calls", load: () => import("./agent-raw-tool-calls.ts") },
  { name: "skills", load: () => import("./skills.ts") },
  { name: "skill-selection", load: () => import("./skill-selection.ts") },
  { name: "webhooks", load: () => import("./webhooks.ts") },
  { name: "session-search", load: () => import("./session-search.ts") },
  { name: "memory", load: () => import("./memory.ts") },
  { name: "evaluation", load: () => import("./evaluation.ts") },
];

for (const area of areas) {
  console.log(`\n=== bench: ${area.name} ===`);
  const mod = await area.load();
  await mod.run();
}
export {};
