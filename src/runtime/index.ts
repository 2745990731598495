/**
 * The runtime's one public entry (docs/layering.md, "The runtime's entry"): what domains, the
 * composition root and the edge may use of sessions, the agent and tools. Everything else under
 * src/runtime/ is the runtime's own; `.dependency-cruiser.cjs` refuses a deep import from outside.
 */

// ---- talking to a session (docs/sessions.md, "Talking to a session") ---------------------------------
export { SessionClient, type SessionResult } from "./session/client.ts";
export { FrameReader } from "./session/protocol.ts";
export { cancelRun, createSession, submitRun, waitForRun } from "./session/service.ts";
export { SESSION_ID_PATTERN, MAX_MESSAGE_BYTES, assertMessageSize, messageFingerprint } from "./session/session-input.ts";
export type { ChannelOrigin, RunResult, SubmitRunInput } from "./session/contract.ts";
export type { SubmitOutcome } from "./session/run-queue.ts";
export type { RunView, SessionView } from "./session/session-object.ts";
export type { Message, PersistentEvent, StreamFrame, Usage } from "./session/events.ts";
export type { DisplayItem } from "./session/display-item.ts";
export { excerpt } from "./session/message-text.ts";
export { deleteSessionCopy } from "./session/deletion.ts";
export { STOP_MAX_TIMEOUT_MS } from "./session/lifecycle.ts";
export { CHANNELS_KEY, ChannelsSchema } from "./channels/config.ts";
export { usageReport } from "./session/usage-report.ts";
export { MAX_SEARCH_DEPTH, searchSessions } from "./session/search.ts";
export { TICKET_TTL_MS, issueTicket, verifyTicket } from "./session/stream-ticket.ts";
export { UiChunkMapper, type BeaverUIChunk } from "./session/ui-chunks.ts";
// The Durable Object class the edge exports (with the composed services).
export { SessionObject } from "./session/session-object.ts";

// ---- the agent ----------------------------------------------------------------------------------------
export { providerModel, redactSecrets, resolveModels, type ModelFactory, type ModelHandle } from "./agent/providers.ts";
export { providerPackages } from "./agent/provider-packages.ts";
export { aiSdk } from "./agent/ai-sdk-loader.ts";

// ---- tools --------------------------------------------------------------------------------------------
export { defineTool, fail, ok, type ToolContext, type ToolResult, type ToolSpec } from "./tools/spec.ts";
export { builtinTools } from "./tools/builtins/index.ts";
export { sessionSearchTool } from "./tools/session-search.ts";
export { workspaceTools } from "./workspace/tools/index.ts";
export { TOOL_POLICY_KEY, ToolPolicySchema, matchesToolName, toolPolicyExtension } from "./tools/policy.ts";

// ---- extension points the composition root fills (docs/layering.md, "Registration instead of imports") --
export {
  DEFAULT_TOOLSET,
  type RunDriver,
  type RunDriverCancelContext,
  type RunDriverContext,
  type RuntimeServices,
  type TextEmbedder,
  type ToolSource,
  type ToolsetFactory,
} from "./services.ts";
export { skillsCommandExtension } from "./skills-command.ts";
export type { Extension } from "./extensions.ts";
export type { MemoryProvider, MemorySnapshotRequest } from "./memory.ts";
export type {
  ActivatedSkill,
  ActivationReason,
  SkillActivation,
  SkillCandidate,
  SkillOverride,
  SkillProvider,
  SkillScores,
  SkillSelectRequest,
} from "./skills.ts";
// The shell's file system and extra-command hook, for `git` (domains/git, docs/workspace.md "Git").
export type { WorkspaceShellFs } from "./workspace/shell-fs.ts";
export { BASH_DESCRIPTION, type ShellCommands } from "./workspace/tools/bash.ts";
export type { NetworkSection } from "./workspace/shell-clock.ts";
export type { ShellCommand } from "./workspace/shell-host.ts";
export type { SessionWorkspace } from "./workspace/session-workspace.ts";
