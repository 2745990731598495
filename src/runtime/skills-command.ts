/**
 * `/skills`: the one extension Beaver ships built the seed's way (docs/extensions.md, "Slash commands";
 * seed event-model-and-extensions.md): a slash command that lists the skills this run activated and the
 * ones it could use, answered without a model call, and a `custom` event recording that it was asked
 * (the extension's own state). Registered at the composition root (src/app/runtime.ts).
 */
import type { Extension } from "./extensions.ts";

export function skillsCommandExtension(): Extension {
  return {
    name: "skills",
    commands: [
      {
        name: "skills",
        description: "List the skills activated for this message and the ones available.",
        run(ctx) {
          const activated = ctx.activatedSkills.map((s) => `- ${s.name} (${s.version}, ${s.reason})`);
          const available = ctx.catalog.filter((n) => !ctx.activatedSkills.some((s) => s.name === n));
          ctx.record("listed", { activated: ctx.activatedSkills.map((s) => s.name), available: available.length });
          const lines = [
            activated.length > 0 ? "Skills activated for this run:" : "No skill was activated for this run.",
            ...activated,
            ...(available.length > 0 ? ["", `Available: ${available.join(", ")}`] : []),
          ];
          return { text: lines.join("\n"), data: { activated: ctx.activatedSkills.map((s) => s.name) } };
        },
      },
    ],
  };
}
