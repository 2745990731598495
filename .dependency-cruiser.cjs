/**
 * The layering rule (docs/layering.md), checked by `npm run lint`:
 *   kernel → storage → runtime → domains → app (composition root) → edge → src/index.ts
 * An import may only point down this list; inside `src/domains/` each domain names the domains it may
 * use, so siblings (toolchain and mail; skills, plugins and learning) never import each other upwards.
 * Layers above the runtime use it only through its entry, src/runtime/index.ts: a deep import into
 * src/runtime/ from outside is refused. No import cycle is allowed anywhere in src/. dependency-cruiser is used rather than an ESLint plugin
 * because one tool checks both the layer arrows and the cycles, type-only imports included.
 */
const layer = (name, mayNotImport, comment) => ({
  name: `layer-${name}`,
  comment,
  severity: "error",
  from: { path: `^src/${name}/` },
  to: { path: `^src/(${mayNotImport.join("|")})(/|\\.ts$)` },
});

/** Domains a domain may import besides itself (everything else under src/domains/ is refused). */
const DOMAIN_DEPENDENCIES = {
  gitea: [],
  tasks: [],
  skills: [],
  toolchain: ["tasks", "gitea", "git"],
  mail: ["tasks"],
  plugins: ["skills", "gitea"],
  learning: ["skills", "plugins"],
  governance: ["skills", "plugins", "learning", "gitea"],
  // Curated memory: agent ids from tasks, the text safety patterns from skills.
  memory: ["tasks", "skills"],
  schedules: [],
  web: [],
  // MCP client (docs/mcp.md): tool sources from the workspace's MCP servers.
  mcp: [],
  // Delegation and teams (docs/delegation.md): agent configs from tasks' registry.
  team: ["tasks"],
  // git over the session workspace (docs/workspace.md, "Git"): knows git, not Gitea.
  git: [],
};

const domainRules = Object.entries(DOMAIN_DEPENDENCIES).map(([domain, allowed]) => ({
  name: `domain-${domain}`,
  comment: `src/domains/${domain} may use only ${allowed.length ? allowed.join(", ") : "no other domain"}`,
  severity: "error",
  from: { path: `^src/domains/${domain}/` },
  to: { path: "^src/domains/", pathNot: `^src/domains/(${[domain, ...allowed].join("|")})/` },
}));

module.exports = {
  forbidden: [
    layer("kernel", ["storage", "runtime", "domains", "app", "edge", "index"], "the kernel imports nothing from Beaver"),
    layer("storage", ["runtime", "domains", "app", "edge", "index"], "storage sits under the runtime and the domains"),
    layer("runtime", ["domains", "app", "edge", "index"], "the runtime knows no domain: domains register at the composition root"),
    layer("domains", ["app", "edge", "index"], "domains are wired by the composition root, never the other way round"),
    layer("app", ["edge", "index"], "the composition root is used by the edge"),
    layer("edge", ["index"], "src/index.ts is the entry point"),
    ...domainRules,
    {
      name: "runtime-entry",
      comment: "outside src/runtime/, the runtime is used through its one public entry, src/runtime/index.ts (docs/layering.md)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/runtime/" },
      to: { path: "^src/runtime/", pathNot: "^src/runtime/index\\.ts$" },
    },
    {
      name: "shell-worker-protocol-only",
      comment:
        "the shell Worker (shell/) is a separate deployment: of Beaver's code it may use only the RPC protocol's types (docs/workspace.md, \"The shell\")",
      severity: "error",
      from: { path: "^shell/" },
      to: { path: "^src/", pathNot: "^src/runtime/workspace/shell-protocol\\.ts$" },
    },
    {
      name: "no-test-code-in-src",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench)/" },
    },
    {
      name: "no-circular",
      comment: "import cycles tie layers and rooms together",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "^(node_modules|dist|\\.wrangler)/" },
  },
};
