/**
 * `npm run bench`: runs every area's benchmark in turn. Each prints its figures as ratios against a
 * baseline measured in the same run, never as pass/fail thresholds. `npm run bench -- --list` names
 * the areas; `npm run bench -- evaluation memory` runs only those (the machine is shared, and one
 * area is often all a change needs).
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
  { name: "receipts", load: () => import("./receipts.ts") },
  { name: "learning-job", load: () => import("./learning-job.ts") },
  { name: "workspace", load: () => import("./workspace.ts") },
  { name: "delegation", load: () => import("./delegation.ts") },
  { name: "git-clone", load: () => import("./git-clone.ts") },
  { name: "bundle", load: () => import("./bundle.ts") },
];

const args = process.argv.slice(2);
if (args.includes("--list")) {
  for (const area of areas) console.log(area.name);
  process.exit(0);
}
const unknown = args.filter((a) => !areas.some((area) => area.name === a));
if (unknown.length > 0) {
  console.error(`unknown bench area(s): ${unknown.join(", ")}; the areas are: ${areas.map((a) => a.name).join(", ")}`);
  process.exit(2);
}
const chosen = args.length === 0 ? areas : areas.filter((area) => args.includes(area.name));

for (const area of chosen) {
  console.log(`\n=== bench: ${area.name} ===`);
  const mod = await area.load();
  await mod.run();
}
export {};
