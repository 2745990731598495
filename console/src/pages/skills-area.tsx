/**
 * The Skills area (docs/console.md, "Skills"): tabs Installed · Plugins · Candidates · Drafts, each at
 * its own address so a tab can be linked and reloaded. Tab addresses start with `~`, which no skill name
 * can hold (names are `[a-z0-9_-]`), so `/skills/:name` stays a skill's page. The old `/plugins` and
 * `/plugins/drafts/:id` addresses redirect here (main.tsx).
 */
import { Link } from "../ui";
import { onLink } from "../router";
import { SkillsPage } from "./skills";
import { PluginsPage } from "./plugins";
import { CandidatesTab } from "./candidates";
import { DraftDetail, DraftsSection } from "./drafts";

const TABS = [
  ["installed", "/skills", "Installed"],
  ["plugins", "/skills/~plugins", "Plugins"],
  ["candidates", "/skills/~candidates", "Candidates"],
  ["drafts", "/skills/~drafts", "Drafts"],
] as const;

type Tab = (typeof TABS)[number][0];

/** `rest` is the path after `/skills/`, already split on `/`. */
export function SkillsArea({ rest }: { rest: string[] }) {
  const first = rest[0] ?? "";
  const tab: Tab | null =
    first === "" ? "installed" : first.startsWith("~") ? (TABS.find(([t]) => `~${t}` === first)?.[0] ?? null) : "installed";
  const sub = rest[1] ? decodeURIComponent(rest[1]) : undefined;
  return (
    <div class="skills-area">
      <nav class="tabs" aria-label="Skills sections">
        {TABS.map(([t, href, label]) => (
          <a key={t} href={href} onClick={onLink} class={t === tab ? "active" : undefined} aria-current={t === tab ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {tab === "installed" ? (
        <SkillsPage name={first ? decodeURIComponent(first) : undefined} />
      ) : tab === "plugins" ? (
        <PluginsPage />
      ) : tab === "candidates" ? (
        <CandidatesTab />
      ) : tab === "drafts" ? (
        sub ? (
          <DraftDetail key={sub} id={sub} />
        ) : (
          <div class="panel">
            <DraftsSection tick={0} />
          </div>
        )
      ) : (
        <section class="panel" aria-label="Not found">
          <h2>No such tab</h2>
          <p>
            <Link href="/skills">Go to the installed skills</Link>
          </p>
        </section>
      )}
    </div>
  );
}
