/**
 * Composition root, runtime: the tool sets domains register with the agent runtime, the model
 * factory it builds models with, and the skill provider that chooses each run's skills. The runtime
 * sees only `RuntimeServices` (docs/layering.md).
 */
import {
  builtinTools,
  DEFAULT_TOOLSET,
  providerModel,
  sessionSearchTool,
  skillsCommandExtension,
  toolPolicyExtension,
  type Extension,
  type RuntimeServices,
  type ToolsetFactory,
  type ToolSpec,
} from "../runtime/index.ts";
import { toolchainCodeTools, toolchainTools } from "../domains/toolchain/tools.ts";
import { codeTools } from "../domains/toolchain/code-tools.ts";
import { mailTools } from "../domains/mail/tools.ts";
import { skillProvider, type SkillProviderOptions } from "../domains/skills/provider.ts";
import { textEmbedder } from "../domains/skills/embeddings.ts";
import { skillViewTool } from "../domains/skills/skill-view.ts";
import { memoryTool } from "../domains/memory/tool.ts";
import { memoryProvider } from "../domains/memory/provider.ts";
import { scheduleTool } from "../domains/schedules/tool.ts";
import { webFetchTool } from "../domains/web/fetch-tool.ts";
import { skillProposeTool } from "../domains/governance/skill-propose-tool.ts";
import { mcpToolSource } from "../domains/mcp/source.ts";
import { delegateTool } from "../domains/team/delegate-tool.ts";
import { TEAM_DRIVER, teamDriver } from "../domains/team/team-run.ts";

/**
 * Tool sets by name: chat sessions get `default`; task runs ask for their domain's set. Every set can
 * read skills (`skill_view`), search the workspace's other sessions (`session_search`, docs/sessions.md),
 * curate memory (`memory`, docs/memory.md) and fetch web pages (`web_fetch`); chat sessions can also
 * schedule messages (`schedule`, docs/schedules.md) and propose skill edits as drafts for review (`skill_propose`,
 * docs/learning.md); chat and code sessions can hand tasks to child sessions (`delegate`; not task and mail
 * runs, whose tools act on a task a child knows nothing of: docs/delegation.md, "Which tool sets offer it").
 * Within a domain's set its own tools are `always` offered, so per-run tool
 * assembly (docs/agent-loop.md, "Tool assembly") never leaves a toolchain run without its report and
 * Gitea tools.
 */
export function registeredToolsets(): Map<string, ToolsetFactory> {
  return new Map<string, ToolsetFactory>([
    [DEFAULT_TOOLSET, () => [...commonTools(), delegateTool, scheduleTool, skillProposeTool]],
    ["toolchain", () => [...commonTools(), ...alwaysOffered(toolchainTools())]],
    // Code scenarios (docs/toolchain.md, "Code scenarios"): the toolchain's tools plus files, a shell and git.
    ["toolchain_code", () => [...commonTools(), ...alwaysOffered([...toolchainCodeTools(), ...codeTools()])]],
    ["mail", () => [...commonTools(), ...alwaysOffered(mailTools())]],
    // A session with files, a shell and git (docs/workspace.md): `toolset: "code"` on a run.
    ["code", () => [...commonTools(), delegateTool, ...alwaysOffered(codeTools())]],
  ]);
}

/**
 * What every set offers: the builtins, `skill_view` and `web_fetch`. `schedule` (a message to the
 * session later) is for chat sessions only: a task run's session is the task's, not a conversation.
 */
function commonTools(): ToolSpec<unknown>[] {
  return [...builtinTools(), skillViewTool, sessionSearchTool, memoryTool, webFetchTool];
}

/** The same tools, marked to be offered to every run of the set. */
export function alwaysOffered(specs: ToolSpec<unknown>[]): ToolSpec<unknown>[] {
  return specs.map((spec) => ({ ...spec, always: true }));
}

/**
 * Extensions in the order their hooks chain (docs/extensions.md). The workspace tool policy comes first,
 * so a denied or approval-bound call is decided before any other layer rewrites or runs anything.
 */
export function registeredExtensions(): Extension[] {
  return [{ ...toolPolicyExtension(), required: true }, skillsCommandExtension()];
}

export function runtimeServices(options: { skills?: SkillProviderOptions } = {}): RuntimeServices {
  return {
    extensions: registeredExtensions(),
    toolsets: registeredToolsets(),
    modelFactory: providerModel,
    skills: skillProvider(options.skills),
    // Tool ranking by the workspace's `embedding_model` (docs/agent-loop.md, "Tool assembly"), with the skills' embedding factory.
    embedder: textEmbedder(options.skills?.embeddingFactory),
    memory: memoryProvider(),
    // MCP servers of the workspace's `mcp` section (docs/mcp.md): their tools join every tool set when a run opens.
    toolSources: [mcpToolSource],
    // Team runs in pipeline and discussion mode (docs/delegation.md, "Teams").
    drivers: new Map([[TEAM_DRIVER, teamDriver]]),
  };
}
