/**
 * The Durable Object adapter of the agent loop (docs/agent-loop.md, "Shape of a run"): it opens the
 * run (run_started, system_prompt_snapshotted, the user message), hands the loop
 * (agent/agent-loop.ts) its ports over this session's log — persistence, live frames, the resolved
 * models, the run's frozen tools, the extensions' hooks and approvals — and persists how the run ended.
 *
 * Resume, idempotency and approvals stay here: the loop reads where the run stands from the log
 * (`runProgress`), so a run resumed after an eviction picks up at its last persisted step.
 */
import type { Env } from "../../storage/env.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import type { ConfigAndRevisionRow } from "../../storage/config/store.ts";
import type { RunResult } from "./contract.ts";
import type { Message, ToolCall } from "./events.ts";
import type { RunRow } from "./do-storage.ts";
import type { SessionLog } from "./session-log.ts";
import { runProgress } from "./run-progress.ts";
import { buildContext } from "./build-context.ts";
import { newId } from "../../kernel/ids.ts";
import { resolveModels, type ResolvedModels } from "../agent/providers.ts";
import { runModelStep } from "../agent/model-step.ts";
import { LoopStop, outcomeOf, runAgentLoop, type LoopOutcome, type LoopPorts, type LoopStore } from "../agent/agent-loop.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { executeToolCall } from "../tools/executor.ts";
import { runToolset, type RunDriverRecord, type RuntimeServices } from "../services.ts";
import { fail } from "../tools/spec.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { AppError } from "../../kernel/errors.ts";
import type { ToolSpec } from "../tools/spec.ts";
import { addUsage, runTokens } from "./usage.ts";
import { logRunEnd } from "./run-log-line.ts";
import { skillMessages, withSkillMessages } from "./skill-messages.ts";
import { estimateMessageTokens } from "../agent/tokens.ts";
import { toolSimilarity } from "../tools/tool-similarity.ts";
// Prompt budget, tool assembly, history window (docs/agent-loop.md): decided in run-assembly.ts.
import { fixedPromptTokens, frozenTools, historyBudgetTokens, openRun, openingFacts } from "./run-assembly.ts";
import { EMPTY_ACTIVATION, hintedToolsOf, type SkillActivation } from "../skills.ts";
// Compaction and titles (docs/sessions.md, "Compaction", "Titles"): compaction.ts, titles.ts.
import { KEEP_SHARE, compactSession, shouldCompact, summariserOf, usageAnchor } from "./compaction.ts";
import { contextSize } from "../agent/context-size.ts";
import { contextForRun } from "./build-context.ts";
import { settleTitle } from "./titles.ts";
// Extensions and tool approval (docs/extensions.md, docs/approvals.md).
import {
  contextThroughHooks,
  enabledExtensions,
  findCommand,
  parseSlashCommand,
  runAfterToolCall,
  runBeforeToolCall,
  warnOnce,
  type Extension,
  type HookContext,
} from "../extensions.ts";
import { offeredByPolicy, toolPolicyOf } from "../tools/policy.ts";
import { deniedText, recordDecision, type ApprovalWaiters, type DecisionOutcome } from "./approvals.ts";
import type { ApprovalRow } from "./do-storage.ts";
import type { ChannelOrigin } from "./contract.ts";
import type { NewPersistent } from "./events.ts";
import type { ToolResult } from "../tools/spec.ts";
import type { SessionWorkspace } from "../workspace/session-workspace.ts";

/**
 * A run restarted this many times in a row without progress is failed instead of resumed again. Each
 * persisted step (an assistant message, a tool result) resets the count (`progressed`), so a long run
 * that sees several deploys but moves on between them is never failed for it (docs/sessions.md, "Restart budget").
 */
export const MAX_RUN_ATTEMPTS = 5;

/** How long a cancelled run waits for its unanswered calls' tools to stop what they started elsewhere. */
const CANCEL_TELL_MS = 5_000;

export interface RunDeps {
  env: Env;
  log: SessionLog;
  /** Tool sets and the model factory from the composition root. */
  services: RuntimeServices;
  /**
   * The workspace configuration (falls back to the last one seen when D1 is unreachable) and the
   * workspace's content revision (null when it could not be read), read together when a run opens;
   * `preread` is that row as the edge read it for this run's request, which then needs no read here.
   */
  loadConfig(preread?: ConfigAndRevisionRow): Promise<{ config: WorkspaceConfig; revision: string | null }>;
  /** Runs waiting for a tool approval, resolved by the SessionDO when a decision comes in. */
  approvals: ApprovalWaiters;
  /** The session's workspace, handed to every tool call (docs/workspace.md). */
  workspace?: SessionWorkspace;
  /** Written with a run's end, in the same transaction (the channel outbox, docs/channels.md): what must not be lost to a restart. */
  recordEnd?(run: RunRow): void;
}

export class RunExecutor {
  readonly #deps: RunDeps;
  readonly run: RunRow;
  readonly #abort = new AbortController();
  /** The run's models once resolved (the title call after the run needs the auxiliary one). */
  #models: ResolvedModels | null = null;
  /** A summary call failed in this run: the rest of it trims instead of trying again each step. */
  #compactionFailed = false;
  /** The extensions this workspace has on (set once the configuration is read). */
  #enabled: Extension[] | null = null;
  /** The skill catalog's names when the run opened here (for `/skills`; empty after a resume). */
  #catalog: string[] = [];
  /** The run's tool set once assembled (a cancelled run tells its unanswered calls' tools). */
  #toolset: ToolSpec<unknown>[] = [];

  /** The config row the edge read for this run's request, when the run opened right after it (run-queue.ts). */
  readonly #preread: ConfigAndRevisionRow | undefined;

  constructor(deps: RunDeps, run: RunRow, preread?: ConfigAndRevisionRow) {
    this.#deps = deps;
    this.run = run;
    this.#preread = preread;
  }

  /** Aborts the step in flight; the run ends `cancelled` (the request is already stored by the caller). */
  cancel(): void {
    this.#abort.abort(new DOMException("Run cancelled", "AbortError"));
  }

  get #cancelRequested(): boolean {
    return this.#abort.signal.aborted || this.run.state.cancel_requested === true;
  }

  /** Runs (or resumes) the run to its end and returns its result; never throws. */
  async execute(): Promise<RunResult> {
    const { log } = this.#deps;
    const state = this.run.state;
    state.attempts = (state.attempts ?? 0) + 1;
    log.store.updateRun(this.run);
    log.emit({ type: "runtime_start", run_id: this.run.id });
    let result: RunResult;
    try {
      if (state.attempts > MAX_RUN_ATTEMPTS)
        throw new LoopStop({
          status: "failed",
          error: { code: "internal", message: `The run was restarted ${MAX_RUN_ATTEMPTS} times in a row without progress` },
        });
      // Run open (docs/performance.md, "Run open", "Run-open reads"): one D1 query for the config and
      // the workspace revision, or none when the edge read them beside the request's rate limits; the
      // skill catalog and the memory snapshot start beside it and are read again only when the
      // revision changed since their provider last read them.
      const inputs = this.#deps.loadConfig(this.#preread);
      const loading = inputs.then((i) => i.config);
      const revision = inputs.then(
        (i) => i.revision,
        () => null,
      );
      const resolving = inputs.then(({ config, revision }) =>
        resolveModels(this.#deps.env, this.run.input.workspace_id, config, {
          override: this.run.input.model_override,
          factory: this.#deps.services.modelFactory,
          revision,
        }),
      );
      resolving.catch(() => undefined); // awaited below; a failure must not go unhandled while the run opens
      const facts = state.user_event_id === undefined ? this.#openingFacts(loading, resolving, revision) : null;
      const config = await loading;
      // The named set plus what tool sources (MCP servers) offer now; also on resume, so frozen names resolve.
      const toolset = allowedOnly(
        await runToolset(this.#deps.services, {
          env: this.#deps.env,
          workspaceId: this.run.input.workspace_id,
          config,
          toolset: this.run.input.toolset,
          data: this.run.input.tool_data ?? {},
          signal: this.#abort.signal,
        }),
        this.run.input.allowed_tools,
      );
      this.#toolset = toolset;
      this.#enabled = enabledExtensions(this.#deps.services.extensions ?? [], config);
      if (facts) await this.#open(config, toolset, await facts);
      if (this.#cancelRequested) throw new LoopStop({ status: "cancelled" });
      // A slash command (docs/extensions.md, "Slash commands") is answered by its extension, with no model call.
      const command =
        this.run.input.source === undefined && this.run.input.driver === undefined ? parseSlashCommand(this.run.input.content) : null;
      if (command) result = await this.#command(command, config);
      else if (this.run.input.driver !== undefined) result = await this.#drive(this.run.input.driver, config);
      else {
        const models = await resolving;
        this.#models = models;
        // The tools assembled when the run opened (frozen in its state), also after a resume.
        const registry = new ToolRegistry(frozenTools(toolset, state.tools));
        result = await this.#loop(config, models, registry);
      }
    } catch (err) {
      result = this.#end(outcomeOf(err, this.#cancelRequested));
    }
    if (result.status === "cancelled") await this.#tellCancelled();
    return this.#finish(result);
  }

  /**
   * The run ended cancelled: each call it left unanswered whose tool has `onRunCancelled` is told — or,
   * for a driven run, its driver's `onRunCancelled` — so work started elsewhere stops too
   * (docs/delegation.md, "Cancel"). This runs in whichever instance ends the run — also one that
   * resumed it after an eviction only to end it, where no `execute` or driver is left to see its
   * signal abort.
   */
  async #tellCancelled(): Promise<void> {
    const driver = this.run.input.driver;
    const told = driver !== undefined ? this.#tellDriver(driver) : this.#tellCancelledCalls();
    if (told.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(told), new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_TELL_MS)))]);
    clearTimeout(timer);
  }

  #tellDriver(name: string): Promise<void>[] {
    const driver = this.#deps.services.drivers?.get(name);
    if (!driver?.onRunCancelled) return [];
    const ctx = {
      env: this.#deps.env,
      workspaceId: this.run.input.workspace_id,
      sessionId: this.#deps.log.session.id,
      runId: this.run.id,
      data: this.run.input.tool_data ?? {},
      records: this.#driverRecords(name),
    };
    return [driver.onRunCancelled(ctx).catch((err: unknown) => log.warn("onRunCancelled failed", { driver: name, ...errorFields(err) }))];
  }

  #tellCancelledCalls(): Promise<void>[] {
    const session = this.#deps.log;
    const progress = runProgress(session.tree, session.leaf, this.run.id);
    if (progress.next !== "tools") return [];
    return progress.pending.flatMap((call) => {
      const spec = this.#toolset.find((t) => t.name === call.name);
      if (!spec?.onRunCancelled) return [];
      const ctx = {
        env: this.#deps.env,
        workspaceId: this.run.input.workspace_id,
        sessionId: session.session.id,
        runId: this.run.id,
        toolCallId: call.id,
      };
      return [
        spec
          .onRunCancelled(call.args, ctx)
          .catch((err: unknown) => log.warn("onRunCancelled failed", { tool: call.name, ...errorFields(err) })),
      ];
    });
  }

  /** After the run's end: its title, replication, `runtime_end`. */
  async #finish(result: RunResult): Promise<RunResult> {
    const { log } = this.#deps;
    // ---- session title (titles.ts): after the first completed run; never fails the run ----
    if (result.status === "completed")
      await settleTitle({
        log,
        auxiliary: this.#models?.auxiliary ?? null,
        runId: this.run.id,
        request: this.run.input.content,
        answer: result.output_text,
        signal: this.#abort.signal,
      });
    // ---- end session title ----
    // D1 catches up after the answer, not before it (replicator.ts `kickAfterAnswer`; docs/sessions.md,
    // "Storage first, D1 second"): readers of their own session's D1 copy flush it first.
    log.replicator.kickAfterAnswer();
    const reason = result.status === "completed" ? "completed" : result.status === "cancelled" ? "cancelled" : "error";
    log.emit({ type: "runtime_end", run_id: this.run.id, reason, ...(result.error ? { error: result.error.message } : {}) });
    return result;
  }

  /** The skill activation and the memory snapshot a run opens with, side by side (read or reused under the revision); neither ever throws. */
  #openingFacts(
    loading: Promise<WorkspaceConfig>,
    resolving: Promise<ResolvedModels>,
    revision: Promise<string | null>,
  ): Promise<[SkillActivation | null, string]> {
    return Promise.all([this.#selectSkills(loading, resolving, revision), this.#memorySnapshot(revision)]);
  }

  async #open(
    config: WorkspaceConfig,
    toolset: ToolSpec<unknown>[],
    [activation, memory]: [SkillActivation | null, string],
  ): Promise<void> {
    const { log } = this.#deps;
    const { input } = this.run;
    // Activated skills' `allowed-tools` are hints for the tool assembly (docs/agent-loop.md, "Tool assembly").
    const hinted = hintedToolsOf(activation?.skills ?? []);
    this.#catalog = (activation?.catalog ?? []).map((s) => s.name);
    // Tools the workspace's policy denies are not offered (a call to one is still refused by the policy hook).
    const specs = toolset.filter((spec) => offeredByPolicy(toolPolicyOf(config), spec.name));
    // Embedding ranking when an `embedding_model` is configured (null: keywords).
    const similarity = await toolSimilarity(
      this.#deps.services.embedder,
      { env: this.#deps.env, workspaceId: input.workspace_id, config, signal: this.#abort.signal },
      specs.filter((s) => !s.always),
      input.content,
    );
    // ---- prompt budget + tool assembly (run-assembly.ts) ----
    const opening = openRun({
      now: new Date(),
      session: log.session,
      config,
      input,
      specs,
      similarity,
      ...(hinted.size > 0 ? { hintedTools: [...hinted.keys()], hintedBy: hinted } : {}),
      ...(activation ? { skills: { catalog: activation.catalog } } : {}),
      ...(memory ? { memory } : {}),
    });
    const system = opening.prompt.text;
    this.run.state.system_prompt_stable_chars = opening.prompt.stableChars;
    this.run.state.tools = opening.tools.specs.map((s) => s.name);
    this.run.state.tool_choices = opening.tools.choices;
    // ---- end prompt budget + tool assembly ----
    const clientId = input.client_id ?? "api";
    const userId = newId("evt");
    this.run.status = "running";
    this.run.started_at = Date.now();
    this.run.state.system_prompt = system;
    this.run.state.user_event_id = userId;
    // No match, no skill: no skill messages and no activation event (seed backend-flow.md §4.5). A run
    // that asked for skills the workspace does not offer still records which (`unknown`).
    const activated = activation !== null && activation.skills.length > 0 ? activation : null;
    const recorded = activated ?? (activation !== null && activation.unknown.length > 0 ? activation : null);
    if (activated) {
      this.run.state.skills = activated.skills;
      this.run.state.skill_bodies = activated.bodies;
    }
    log.append(
      [
        { type: "run_started", run_id: this.run.id, client_id: clientId, input: describeInput(this.run) },
        { type: "system_prompt_snapshotted", run_id: this.run.id, client_id: clientId, prompt: system, ...openingFacts(opening, config) },
        ...(recorded ? [skillActivationEvent(this.run.id, clientId, recorded)] : []),
        ...(input.channel ? [channelInjectEvent(this.run.id, clientId, input.channel)] : []),
        {
          type: "message",
          id: userId,
          run_id: this.run.id,
          client_id: clientId,
          message: { role: "user", content: input.content, ...(input.source ? { meta: { source: input.source } } : {}) },
        },
      ],
      () => log.store.updateRun(this.run),
    );
    // Lifecycle (docs/extensions.md, "Lifecycle events"): the prompt is in the log.
    log.emit({ type: "prompt_submit", run_id: this.run.id, content_chars: input.content.length });
  }

  // --- skills (src/runtime/skills.ts): chosen once when the run opens, frozen with it ---
  /** The run's skill activation, or null when no skill provider is registered. Never fails the run. */
  async #selectSkills(
    loading: Promise<WorkspaceConfig>,
    resolving: Promise<ResolvedModels>,
    revision: Promise<string | null>,
  ): Promise<SkillActivation | null> {
    const provider = this.#deps.services.skills;
    if (!provider) return null;
    const { input } = this.run;
    const session = this.#deps.log.session;
    const sessionPins = Array.isArray(session.metadata?.skills) ? session.metadata.skills.filter((s) => typeof s === "string") : [];
    try {
      return await provider.select({
        env: this.#deps.env,
        workspaceId: input.workspace_id,
        sessionId: session.id,
        message: input.content,
        explicit: input.skills ?? [],
        pinned: [...new Set([...(input.pinned_skills ?? []), ...sessionPins])],
        ...(input.skill_choice === "requested_only" ? { requestedOnly: true } : {}),
        ...(input.skill_overrides && input.skill_overrides.length > 0 ? { overrides: input.skill_overrides } : {}),
        config: loading,
        revision,
        auxiliary: resolving.then(
          (m) => m.auxiliary,
          () => null,
        ),
        signal: this.#abort.signal,
      });
    } catch (err) {
      if (this.#cancelRequested) throw err;
      log.warn("skill selection failed; the run goes on without skills", errorFields(err));
      return { ...EMPTY_ACTIVATION, rationale: `skill selection failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  // --- memory (src/runtime/memory.ts; docs/memory.md): snapshotted once when the run opens, frozen in its system prompt ---
  /** The run's memory section, or "" without a provider. Never fails the run. */
  async #memorySnapshot(revision: Promise<string | null>): Promise<string> {
    const provider = this.#deps.services.memory;
    if (!provider) return "";
    try {
      return await provider.snapshot({
        env: this.#deps.env,
        workspaceId: this.run.input.workspace_id,
        sessionId: this.#deps.log.session.id,
        data: this.run.input.tool_data ?? {},
        revision,
      });
    } catch (err) {
      if (this.#cancelRequested) throw err;
      log.warn("memory snapshot failed; the run goes on without memory", errorFields(err));
      return "";
    }
  }
  // --- end memory ---

  /** The loop (agent/agent-loop.ts) over this Durable Object's ports: the session log, the resolved models, the run's tools. */
  async #loop(config: WorkspaceConfig, models: ResolvedModels, registry: ToolRegistry): Promise<RunResult> {
    const { log, env } = this.#deps;
    const run = this.run;
    const store: LoopStore = {
      progress: () => runProgress(log.tree, log.leaf, run.id),
      takeSteers: () => this.#persistSteers(),
      leaf: () => log.leaf,
      history: () => this.#history(config, models, registry),
      saveAssistant: (eventId, parentId, message) => {
        const totals = message.usage ? addUsage(log.store.usageTotals(), message.usage) : log.store.usageTotals();
        log.appendOne({ type: "message", id: eventId, parent_id: parentId, run_id: run.id, client_id: "assistant", message }, () => {
          progressed(run);
          log.store.updateRun(run);
          log.store.setMeta("usage", totals);
        });
      },
      toolStarted: (callId) => log.store.toolStart(callId)?.event_id,
      markToolStarted: (callId, eventId, at) =>
        log.store.markToolStarted({ tool_call_id: callId, run_id: run.id, event_id: eventId, started_at: at }),
      saveToolResult: (eventId, call, content, isError) => this.#persistToolResult(eventId, call, content, isError),
    };
    // The run's token budget (docs/delegation.md, "Usage"): its own share when delegated, else the workspace's.
    const tokenLimit = run.input.max_run_tokens ?? config.runtime.max_run_tokens;
    const ports: LoopPorts = {
      runId: run.id,
      state: run.state,
      store,
      model: {
        step: ({ messages, tools, signal, callbacks }) =>
          runModelStep({
            models,
            system: run.state.system_prompt ?? "",
            messages,
            // Cacheable prefix: a run opened before prefixes were recorded sends no cache hints.
            ...(run.state.system_prompt_stable_chars !== undefined
              ? { cache: { stableChars: run.state.system_prompt_stable_chars, key: log.session.id } }
              : {}),
            tools,
            signal,
            callbacks,
          }),
      },
      tools: {
        registry,
        execute: (call, io) =>
          executeToolCall(registry, call, {
            env,
            workspaceId: run.input.workspace_id,
            sessionId: log.session.id,
            runId: run.id,
            toolCallId: call.id,
            signal: io.signal,
            data: run.input.tool_data ?? {},
            // The run's own configuration (what its system prompt told the model), not a fresh D1 read.
            timezone: config.runtime.timezone,
            ...(run.input.dry_run ? { dryRun: true } : {}),
            ...(run.input.skill_overrides ? { skillOverrides: run.input.skill_overrides } : {}),
            // ---- workspace (docs/workspace.md): file tools read and commit the session's files ----
            ...(this.#deps.workspace ? { workspace: this.#deps.workspace } : {}),
            // ---- delegation (docs/delegation.md): what a child run may inherit from this one ----
            config,
            tools: registry.names(),
            ...(run.input.toolset !== undefined ? { toolset: run.input.toolset } : {}),
            ...(run.input.model_override ? { modelOverride: run.input.model_override } : {}),
            ...(tokenLimit !== undefined
              ? { tokensLeft: Math.max(0, tokenLimit - runTokens(run.state.usage, run.state.delegated_usage)) }
              : {}),
            emitUpdate: io.emitUpdate,
            // A tool that reads this session from D1 first lets the run's debounced replication catch up.
            replicated: async () => void (await log.replicator.flush()),
          }),
      },
      hooks: {
        context: (built) => contextThroughHooks(this.#extensions, built, this.#hookContext(config)),
        gate: (call, known) => this.#gate(call, config, known),
        afterToolCall: (call, result) =>
          runAfterToolCall(this.#extensions, { toolCallId: call.id, name: call.name, args: call.args }, result, this.#hookContext(config)),
      },
      frames: { emit: (frame) => void log.emit(frame) },
      clock: { now: () => Date.now() },
      signal: this.#abort.signal,
      cancelled: () => this.#cancelRequested,
      maxToolIterations: {
        limit: run.input.max_tool_iterations ?? config.runtime.max_tool_iterations,
        source: run.input.max_tool_iterations === undefined ? "runtime.max_tool_iterations" : "this run's max_tool_iterations",
      },
      ...(tokenLimit !== undefined
        ? {
            maxRunTokens: {
              limit: tokenLimit,
              source: run.input.max_run_tokens === undefined ? "runtime.max_run_tokens" : "this run's share of its parent's max_run_tokens",
            },
          }
        : {}),
    };
    const outcome = await runAgentLoop(ports);
    return this.#end(outcome);
  }

  /**
   * The history of the next model step: compacted when due, windowed by `max_context_messages` and the
   * token budget, with the run's skill messages before its user message (skill-messages.ts).
   */
  async #history(config: WorkspaceConfig, models: ResolvedModels, registry: ToolRegistry): Promise<Message[]> {
    const { log } = this.#deps;
    const state = this.run.state;
    const skills = skillMessages(state.skill_bodies);
    const budget = historyBudgetTokens(models, state.system_prompt ?? "", registry.list());
    const skillTokens = skills.reduce((n, m) => n + estimateMessageTokens(m), 0);
    const maxTokens = budget === undefined ? undefined : Math.max(1, budget - skillTokens);
    await this.#maybeCompact(config, models, maxTokens, fixedPromptTokens(state.system_prompt ?? "", registry.list()) + skillTokens);
    const history = buildContext(log.tree, log.leaf, {
      maxMessages: config.runtime.max_context_messages,
      ...(maxTokens !== undefined ? { maxTokens } : {}),
    });
    const anchor = state.user_event_id === undefined ? undefined : log.tree.get(state.user_event_id);
    return withSkillMessages(history, anchor?.type === "message" ? anchor.message : undefined, skills);
  }

  /** Steer messages queued while the run worked join the log between steps. */
  #persistSteers(): number {
    const { log } = this.#deps;
    const steers = log.store.pendingSteers(this.run.id);
    if (steers.length === 0) return 0;
    log.append(
      steers.flatMap((s) => steerEvents(this.run.id, s)),
      () => steers.forEach((s) => log.store.dropSteer(s.id)),
    );
    return steers.length;
  }

  // ---- compaction (compaction.ts; docs/sessions.md, "Compaction") ----
  /** Compacts the history before a model step when it would take more than `compact_at_share` of its window. */
  async #maybeCompact(config: WorkspaceConfig, models: ResolvedModels, maxTokens: number | undefined, fixedTokens: number): Promise<void> {
    if (maxTokens === undefined || this.#compactionFailed) return;
    const { log } = this.#deps;
    const history = contextForRun(log.tree, log.leaf, { maxMessages: config.runtime.max_context_messages });
    // The size is the last step's reported usage plus an estimate of what came after (context-size.ts).
    const size = contextSize(history.messages, { fixedTokens, anchor: usageAnchor(log.tree, log.leaf) });
    if (!shouldCompact(size.tokens, maxTokens, config.runtime.compact_at_share)) return;
    const outcome = await compactSession({
      log,
      summariser: summariserOf(models),
      keepTokens: Math.max(1, Math.floor(maxTokens * KEEP_SHARE)),
      runId: this.run.id,
      clientId: "compaction",
      signal: this.#abort.signal,
    });
    // Logged by compactSession; the step goes on with the token window trimming the history.
    if (outcome.status === "failed" || outcome.status === "moved") this.#compactionFailed = true;
  }
  // ---- end compaction ----

  // ---- extensions (src/runtime/extensions.ts; docs/extensions.md) ----
  get #extensions(): readonly Extension[] {
    return this.#enabled ?? this.#deps.services.extensions ?? [];
  }

  /**
   * Runs a slash command: its text becomes a `custom_message` (kind `command:<name>`) and the run's
   * answer. An unknown command, or one that throws, is answered the same way with what went wrong.
   * A resumed run whose answer is already logged ends with it.
   */
  async #command(command: { name: string; args: string }, config: WorkspaceConfig): Promise<RunResult> {
    const { log } = this.#deps;
    const run = this.run;
    const leaf = log.leaf ? log.tree.get(log.leaf) : undefined;
    if (leaf?.type === "custom_message" && leaf.run_id === run.id && leaf.message.role === "assistant") {
      run.state.output_text = leaf.message.text;
      run.state.finish_reason = "command";
      return this.#end({ status: "completed" });
    }
    const found = findCommand(this.#extensions, command.name);
    let text: string;
    let data: unknown;
    let kind = `command:${command.name}`;
    if (!found) {
      const known = this.#extensions.flatMap((e) => (e.commands ?? []).map((c) => `/${c.name} — ${c.description}`));
      kind = "command:unknown";
      text = [`There is no command /${command.name}.`, ...(known.length > 0 ? ["Commands:", ...known] : [])].join("\n");
    } else {
      try {
        const out = await found.command.run({
          ...this.#hookContext(config),
          runId: run.id,
          args: command.args,
          activatedSkills: run.state.skills ?? [],
          catalog: this.#catalog,
          record: (recordKind, recordData) =>
            log.appendOne({
              type: "custom",
              run_id: run.id,
              client_id: found.extension,
              kind: `${found.extension}:${recordKind}`,
              data: recordData,
            }),
        });
        text = out.text;
        data = out.data;
      } catch (err) {
        warnOnce(found.extension, `command /${command.name}`, err);
        text = `The command /${command.name} failed: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    const message = { role: "assistant" as const, text, tool_calls: [], finish_reason: "command" };
    log.appendOne({
      type: "custom_message",
      run_id: run.id,
      client_id: "assistant",
      kind,
      message,
      ...(data !== undefined ? { data } : {}),
    });
    run.state.output_text = text;
    run.state.finish_reason = "command";
    return this.#end({ status: "completed" });
  }

  // ---- run drivers (services.ts, RunDriver; docs/delegation.md, "Teams") ----
  /** Runs a registered driver instead of the loop; its answer becomes a `custom_message` (kind `<driver>:result`). */
  async #drive(name: string, config: WorkspaceConfig): Promise<RunResult> {
    const { log } = this.#deps;
    const run = this.run;
    const driver = this.#deps.services.drivers?.get(name);
    if (!driver) throw new AppError("bad_request", `There is no run driver '${name}'`);
    const out = await driver({
      env: this.#deps.env,
      workspaceId: run.input.workspace_id,
      sessionId: log.session.id,
      runId: run.id,
      content: run.input.content,
      data: run.input.tool_data ?? {},
      config,
      signal: this.#abort.signal,
      record: (kind, key, data) => {
        const logged = this.#driverRecords(name).some((r) => r.kind === kind && r.key === key);
        if (!logged) log.appendOne({ type: "custom", run_id: run.id, client_id: name, kind: `${name}:${kind}`, data: { ...data, key } });
      },
    });
    if (this.#cancelRequested) throw new LoopStop({ status: "cancelled" });
    const finishReason = out.finish_reason ?? "stop";
    run.state.output_text = out.output_text;
    run.state.finish_reason = finishReason;
    if (out.usage) run.state.delegated_usage = out.usage;
    log.appendOne(
      {
        type: "custom_message",
        run_id: run.id,
        client_id: "assistant",
        kind: `${name}:result`,
        message: { role: "assistant", text: out.output_text, tool_calls: [], finish_reason: finishReason },
      },
      () => log.store.updateRun(run),
    );
    return this.#end({ status: "completed" });
  }

  /** What driver `name` recorded in this run (`custom` events of kind `<name>:<kind>`), in log order. */
  #driverRecords(name: string): RunDriverRecord[] {
    const { log } = this.#deps;
    const prefix = `${name}:`;
    return log.tree.pathToRoot(log.leaf).flatMap((e) => {
      if (e.type !== "custom" || e.run_id !== this.run.id || !e.kind.startsWith(prefix)) return [];
      const data = (e.data ?? {}) as Record<string, unknown>;
      return typeof data.key === "string" ? [{ kind: e.kind.slice(prefix.length), key: data.key, data }] : [];
    });
  }

  #hookContext(config: WorkspaceConfig): HookContext {
    return {
      env: this.#deps.env,
      workspaceId: this.run.input.workspace_id,
      sessionId: this.#deps.log.session.id,
      runId: this.run.id,
      config,
      data: this.run.input.tool_data ?? {},
    };
  }

  /**
   * Whether a call runs, and with which arguments. A call with an approval record follows it (waiting
   * when undecided: also after a resume); otherwise the `beforeToolCall` chain decides, and a
   * `require_approval` records the request and waits (docs/approvals.md) — unless the run has no such
   * tool: nobody is asked to approve a call that can only answer `unknown_tool`.
   */
  async #gate(
    call: ToolCall,
    config: WorkspaceConfig,
    known: boolean,
  ): Promise<{ run: true; args: unknown } | { run: false; result: ToolResult }> {
    const { log } = this.#deps;
    const recorded = log.store.approvalForCall(this.run.id, call.id);
    if (recorded) return this.#afterApproval(recorded);
    const outcome = await runBeforeToolCall(
      this.#extensions,
      { toolCallId: call.id, name: call.name, args: call.args },
      this.#hookContext(config),
    );
    if (outcome.action === "continue") return { run: true, args: outcome.args };
    if (outcome.action === "block") return { run: false, result: fail(outcome.code, outcome.reason) };
    if (!known) return { run: true, args: outcome.args };
    const approvalId = newId("apr");
    const expiresAt = Date.now() + config.runtime.approval_timeout_ms;
    log.appendOne(
      {
        type: "tool_approval_requested",
        run_id: this.run.id,
        client_id: "approval",
        approval_id: approvalId,
        tool_call_id: call.id,
        tool_name: call.name,
        args: outcome.args,
        reason: outcome.reason,
        expires_at: expiresAt,
      },
      () =>
        log.store.insertApproval({
          approval_id: approvalId,
          run_id: this.run.id,
          tool_call_id: call.id,
          tool_name: call.name,
          args: outcome.args,
          expires_at: expiresAt,
        }),
    );
    return this.#afterApproval(log.store.approval(approvalId)!);
  }

  async #afterApproval(row: ApprovalRow): Promise<{ run: true; args: unknown } | { run: false; result: ToolResult }> {
    let outcome: DecisionOutcome;
    if (row.decision === null) {
      // Expired while nobody was here to notice (an eviction): decide it now rather than wait for the alarm.
      if (row.expires_at <= Date.now()) {
        recordDecision(this.#deps.log, row.approval_id, "deny", "timeout", "approval");
        outcome = { decision: "deny", decided_by: "timeout" };
      } else {
        // Restarts while a run waits for a person say nothing about the run itself: they do not count
        // towards MAX_RUN_ATTEMPTS (a long wait may well see a deploy or two).
        if ((this.run.state.attempts ?? 0) > 1) {
          this.run.state.attempts = 1;
          this.#deps.log.store.updateRun(this.run);
        }
        outcome = await this.#deps.approvals.wait(row.approval_id, this.#abort.signal);
      }
    } else outcome = { decision: row.decision, decided_by: row.decided_by ?? "person" };
    if (outcome.decision === "approve") return { run: true, args: row.args };
    return { run: false, result: fail("approval_denied", deniedText(row.tool_name, outcome.decided_by)) };
  }
  // ---- end extensions ----

  #persistToolResult(eventId: string, call: ToolCall, content: string, isError: boolean): void {
    const { log } = this.#deps;
    log.appendOne(
      {
        type: "message",
        id: eventId,
        run_id: this.run.id,
        client_id: "tool",
        message: { role: "tool_result", tool_call_id: call.id, tool_name: call.name, content, is_error: isError },
      },
      () => {
        log.store.clearToolStart(call.id);
        // A persisted step resets the restart budget; the run's delegated usage (agent-loop.ts) moves with
        // the result that brought it.
        if (progressed(this.run) || this.run.state.delegated_usage) log.store.updateRun(this.run);
      },
    );
  }

  /** Persists the end of the run (a visible error message first when it failed) and returns its result. */
  #end(end: LoopOutcome): RunResult {
    const { log } = this.#deps;
    const run = this.run;
    const state = run.state;
    const result: RunResult = {
      session_id: log.session.id,
      run_id: run.id,
      status: end.status,
      output_text: end.status === "completed" ? state.output_text : "",
      finish_reason: end.status === "completed" ? state.finish_reason : end.status === "cancelled" ? "cancelled" : "error",
      tool_iterations: state.tool_iterations,
      provider: state.provider,
      model: state.model,
      usage: state.usage,
      ...(state.delegated_usage ? { delegated_usage: state.delegated_usage } : {}),
      ...(end.status === "failed" ? { error: end.error } : {}),
    };
    run.status = end.status;
    run.ended_at = Date.now();
    run.started_at ??= run.ended_at;
    run.result = result;
    const clientId = run.input.client_id ?? "api";
    // Steer messages that arrived too late for a step are kept in the log (they were acknowledged).
    const lateSteers = log.store.pendingSteers(run.id);
    // A call still waiting for a person when the run ends is closed: nobody can approve it any more.
    const unanswered = log.store.openApprovals(run.id);
    const events: Parameters<SessionLog["append"]>[0] = unanswered.map((a) => ({
      type: "tool_approval_decided" as const,
      run_id: run.id,
      client_id: "approval",
      approval_id: a.approval_id,
      tool_call_id: a.tool_call_id,
      tool_name: a.tool_name,
      decision: "deny" as const,
      decided_by: "cancelled" as const,
    }));
    events.push(...lateSteers.flatMap((s) => steerEvents(run.id, s)));
    if (end.status === "failed") {
      events.push({
        type: "message",
        run_id: run.id,
        client_id: "assistant",
        message: { role: "assistant", text: "", tool_calls: [], error: end.error, finish_reason: "error" },
      });
    }
    if (end.status === "failed")
      events.push({
        type: "run_failed",
        run_id: run.id,
        client_id: clientId,
        error: end.error,
        result: { ...result },
      });
    else events.push({ type: "run_completed", run_id: run.id, client_id: clientId, result: { ...result } });
    log.append(events, () => {
      log.store.updateRun(run);
      for (const steer of lateSteers) log.store.dropSteer(steer.id);
      for (const a of unanswered) log.store.decideApproval(a.approval_id, "deny", "cancelled", run.ended_at ?? Date.now());
      this.#deps.recordEnd?.(run);
    });
    log.inProgress.reset();
    logRunEnd({
      result,
      workspaceId: run.input.workspace_id,
      clientId,
      startedAt: run.started_at,
      endedAt: run.ended_at,
      toolCalls: log.store.toolResultCount(run.id),
      attempts: state.attempts ?? 1,
    });
    return result;
  }
}

/** A persisted step resets the restart budget to this execution alone; true when it had counted restarts. */
function progressed(run: RunRow): boolean {
  if ((run.state.attempts ?? 1) <= 1) return false;
  run.state.attempts = 1;
  return true;
}

/** The tools a run may be offered: all of its set, or those `allowed_tools` names (a delegated child's, docs/delegation.md). */
function allowedOnly(specs: ToolSpec<unknown>[], allowed: readonly string[] | undefined): ToolSpec<unknown>[] {
  if (allowed === undefined) return specs;
  const names = new Set(allowed);
  return specs.filter((s) => names.has(s.name));
}

/** A message from outside the API is preceded by where it came from (docs/channels.md; docs/sessions.md, "Two-way live channel"). */
function channelInjectEvent(runId: string, clientId: string, origin: ChannelOrigin): NewPersistent {
  return {
    type: "channel_inject",
    run_id: runId,
    client_id: clientId,
    channel: origin.channel,
    external_id: origin.external_id,
    ...(origin.device_id !== undefined ? { device_id: origin.device_id } : {}),
    ...(origin.metadata !== undefined ? { metadata: origin.metadata } : {}),
  };
}

/** A steer or follow-up joining the run: its channel fact (when it came through one), then the message. */
function steerEvents(
  runId: string,
  s: { client_id: string; content: string; source: "steer" | "followUp"; channel?: ChannelOrigin },
): NewPersistent[] {
  return [
    ...(s.channel ? [channelInjectEvent(runId, s.client_id, s.channel)] : []),
    { type: "message", run_id: runId, client_id: s.client_id, message: { role: "user", content: s.content, meta: { source: s.source } } },
  ];
}

function skillActivationEvent(runId: string, clientId: string, a: SkillActivation) {
  return {
    type: "skill_activation_snapshotted" as const,
    run_id: runId,
    client_id: clientId,
    skills: a.skills,
    candidates: a.candidates,
    rationale: a.rationale,
    unknown: a.unknown,
    catalog_size: a.catalog.length,
  };
}

/** What `run_started` records: the submission minus its content (that is the user message). */
function describeInput(run: RunRow): Record<string, unknown> {
  const { content: _content, model_override, ...rest } = run.input;
  return {
    ...rest,
    ...(model_override ? { model_override: { provider: model_override.provider, id: model_override.id } } : {}),
    content_chars: run.input.content.length,
  };
}
