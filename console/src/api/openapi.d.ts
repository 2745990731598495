// Generated from Beaver's OpenAPI document by console/scripts/openapi-types.mjs: do not edit.
// Beaver 0.1.0

export interface Schemas {
  Workspace: {
    id: string;
    name: string;
    created_at: number;
  };
  Error: {
    error: {
      code: string;
      message: string;
      details?: unknown;
    };
  };
  Token: {
    id: string;
    workspace_id: string;
    name: string;
    scopes: Array<"admin" | "member" | "read">;
    created_at: number;
    revoked_at: number | null;
  };
  WorkspaceConfig: {
    [key: string]: unknown | undefined;
  };
  SecretMeta: {
    name: string;
    created_at: number;
    updated_at: number;
  };
  SkillStats: {
    skill: string;
    runs: number;
    overall: Schemas["RunCounts"];
    versions: Array<(Schemas["RunCounts"]) & ({
      version: string;
    })>;
    baseline: Schemas["RunCounts"];
    similar_baseline?: (Schemas["RunCounts"]) & ({
      looked_at: {
        with_skill: number;
        without_skill: number;
      };
    });
    by_agent: Array<{
      agent_id: string | null;
      with_skill: Schemas["RunCounts"];
      without_skill: Schemas["RunCounts"];
    }>;
  };
  RunCounts: {
    runs: number;
    success: number;
    failure: number;
    cancelled: number;
    pending: number;
    success_rate: number | null;
    feedback: {
      up: number;
      down: number;
      none: number;
      up_rate: number | null;
    };
  };
  RunResult: {
    session_id: string;
    run_id: string;
    status: "queued" | "running" | "completed" | "failed" | "cancelled";
    output_text: string;
    finish_reason: string;
    tool_iterations: number;
    provider: string | null;
    model: string | null;
    usage: Schemas["Usage"];
    delegated_usage?: (Schemas["Usage"]) & (unknown);
    error?: {
      code: string;
      message: string;
    };
  };
  Usage: {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
    cache_read_tokens?: number;
    cache_write_tokens?: number;
    reasoning_tokens?: number;
  };
  SubmitAccepted: {
    session_id: string;
    run_id: string;
    status: string;
    deduplicated: boolean;
    steered: boolean;
  };
  SessionEvent: Record<string, unknown>;
  RunFeedback: {
    rating: "up" | "down";
    comment?: string;
  };
  WorkspaceFileChanges: {
    active_leaf: string | null;
    changes: Array<{
      event_id: string;
      seq: number;
      ts: number;
      run_id: string;
      tool_call_id: string;
      tool_name: string;
      command: string | null;
      tree_hash: string;
      changed: boolean;
    }>;
  };
  WorkspaceFiles: {
    tree_hash: string;
    event_id: string | null;
    file_count: number;
    total_bytes: number;
    files: Array<{
      path: string;
      size: number;
      sha256: string;
    }>;
    truncated: boolean;
  };
  Session: {
    id: string;
    workspace_id: string;
    title: string;
    status: "open" | "stopping" | "stopped" | "closed";
    metadata: {
      [key: string]: unknown | undefined;
    };
    created_at: number;
    updated_at: number;
    last_seq: number;
    active_leaf: string | null;
    usage: Schemas["Usage"];
    active_run_id: string | null;
    queued_runs: number;
    archived_at?: number | null;
    channel?: string | null;
    forked_from?: {
      session_id: string;
      event_id: string | null;
    };
    forks?: Array<{
      session_id: string;
      event_id: string | null;
      at: number;
    }>;
  };
  SessionListItem: {
    id: string;
    title: string;
    status: string;
    metadata: {
      [key: string]: unknown | undefined;
    };
    created_at: number;
    updated_at: number;
    last_seq: number;
    archived_at: number | null;
    usage: Schemas["Usage"];
  };
  Run: {
    id: string;
    status: "queued" | "running" | "completed" | "failed" | "cancelled";
    created_at: number;
    started_at: number | null;
    ended_at: number | null;
    idempotency_key: string | null;
    source: "steer" | "followUp" | null;
    toolset: string | null;
    retry_of: string | null;
    result: Schemas["RunResult"];
  };
  ContextMessage: Record<string, unknown>;
  DisplayItem: Record<string, unknown>;
  ChatResponse: {
    session_id: string;
    run_id: string;
    output_text: string;
    finish_reason: string;
    tool_iterations: number;
    provider: string | null;
    model: string | null;
    usage: {
      input_tokens: number;
      output_tokens: number;
      total_tokens: number;
      cache_read_tokens?: number;
      cache_write_tokens?: number;
      reasoning_tokens?: number;
    };
  };
  Agent: {
    id: string;
    gitea_username: string;
    roles: Array<"reviewer" | "developer" | "infra" | "supervisor">;
    model: {
      [key: string]: unknown | undefined;
    } | null;
    gitea_token_secret: string | null;
    skills: Array<string>;
    enabled: boolean;
    created_at: number;
    updated_at: number;
  };
  Team: {
    name: string;
    coordinator: string;
    members: Array<string>;
    mode: "delegate" | "pipeline" | "discussion";
    max_rounds?: number;
  };
  TeamRun: {
    team: string;
    mode: "delegate" | "pipeline" | "discussion";
    session_id: string;
    run_id: string;
    status: "queued" | "running" | "completed" | "failed" | "cancelled";
    output_text: string;
    finish_reason: string;
    turns: Array<{
      [key: string]: unknown | undefined;
    }>;
    error?: {
      code: string;
      message: string;
    };
  };
  ToolchainDelivery: {
    [key: string]: unknown | undefined;
  };
  ToolchainTask: {
    [key: string]: unknown | undefined;
  };
  ToolchainTaskComment: {
    id: string;
    author: string;
    comment_type: string;
    body: string;
    created_at: number;
  };
  ToolchainTaskOutput: {
    id: string;
    type: string;
    content: string;
    created_at: number;
  };
  Mail: {
    [key: string]: unknown | undefined;
  };
  Memory: {
    agent_id: string | null;
    stores: {
      notes: Schemas["MemoryStore"];
      profile: Schemas["MemoryStore"];
    };
  };
  MemoryStore: {
    store: "notes" | "profile";
    entries: Array<Schemas["MemoryEntry"]>;
    used_chars: number;
    budget_chars: number;
    usage: string;
  };
  MemoryEntry: {
    id: string;
    text: string;
    created_at: number;
    updated_at: number;
  };
  MemoryChange: {
    seq: number;
    store: "notes" | "profile";
    action: "add" | "replace" | "remove" | "put";
    entry_id: string | null;
    old_text: string | null;
    new_text: string | null;
    actor: {
      kind: "token" | "run";
      id: string;
      session_id: string | null;
    };
    created_at: number;
  };
  Schedule: {
    id: string;
    session_id: string | null;
    message: string;
    at: string | null;
    cron: string | null;
    timezone: string;
    next_run_at: string | null;
    created_by: string;
    created_at: string;
    last_fired_at: string | null;
    last_error: string | null;
  };
  McpServerStatus: {
    name: string;
    url: string;
    transport: "streamable-http" | "sse";
    auth: "oauth" | null;
    personal: boolean;
    status: "connected" | "error" | "needs_authorization";
    error: {
      code: string;
      message: string;
    } | null;
    discovered_at: number;
    cached: boolean;
    tools: Array<{
      name: string;
      mcp_name: string;
      description: string;
      idempotent: boolean;
    }>;
  };
  UsageRow: {
    key: string;
    label?: string | null;
    runs: number;
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
  };
  OAuthConsentRequest: {
    client_id: string;
    client_name: string;
    client_uri: string | null;
    redirect_uri: string;
    redirect_host: string;
    redirect_is_loopback: boolean;
    requested_scopes: Array<string>;
    grantable_scopes: Array<"read" | "member">;
    workspaces: Array<{
      id: string;
      name: string;
    }>;
  };
  OAuthRedirect: {
    redirect_to: string;
  };
  OAuthGrant: {
    id: string;
    client_id: string;
    client_name: string | null;
    scopes: Array<string>;
    approved_by: string | null;
    created_at: number;
    expires_at: number | null;
  };
  JsonRpcMessage: {
    jsonrpc: "2.0";
    [key: string]: unknown | undefined;
  };
  Evaluation: {
    id: string;
    draft_id: string;
    skill: string;
    status: "running" | "passed" | "failed" | "cancelled";
    baseline_version: string | null;
    candidate_version: string;
    concurrency: number;
    max_steps: number;
    progress: {
      total: number;
      finished: number;
      running: number;
      pending: number;
    };
    cases: Array<{
      index: number;
      source: "cases_file" | "recorded_session";
      state: "pending" | "running" | "done" | "error" | "cancelled";
      prompt: string;
      baseline_score: number | null;
      candidate_score: number | null;
      error: string | null;
    }>;
    report?: unknown;
    created_at: string;
    finished_at: string | null;
    version: number;
  };
  OpenAIError: {
    error: {
      message: string;
      type: string;
      code: string;
      param: string | null;
    };
  };
  ChatCompletionRequest: {
    model: string;
    messages: Array<{
      role: "system" | "developer" | "user" | "assistant" | "tool" | "function";
      content?: string | Array<{
        type: string;
        text?: string;
        [key: string]: unknown | undefined;
      }> | null;
      name?: string;
      tool_calls?: Array<unknown>;
      tool_call_id?: string;
      [key: string]: unknown | undefined;
    }>;
    stream?: boolean | null;
    stream_options?: {
      include_usage?: boolean;
      [key: string]: unknown | undefined;
    } | null;
    n?: number | null;
    tools?: Array<unknown>;
    functions?: Array<unknown>;
    tool_choice?: unknown;
    function_call?: unknown;
    response_format?: {
      type: string;
      [key: string]: unknown | undefined;
    } | null;
    [key: string]: unknown | undefined;
  };
  ResponseRequest: {
    model: string;
    input: string | Array<{
      type?: string;
      role?: "system" | "developer" | "user" | "assistant" | "tool" | "function";
      content?: string | Array<{
        type: string;
        text?: string;
        [key: string]: unknown | undefined;
      }> | null;
      [key: string]: unknown | undefined;
    }>;
    instructions?: string | null;
    previous_response_id?: string | null;
    stream?: boolean | null;
    tools?: Array<unknown>;
    tool_choice?: unknown;
    conversation?: unknown;
    background?: boolean | null;
    store?: boolean | null;
    [key: string]: unknown | undefined;
  };
  UIMessage: {
    id: string;
    role: "system" | "user" | "assistant";
    parts: Array<{
      type: string;
      text?: string;
      [key: string]: unknown | undefined;
    }>;
    [key: string]: unknown | undefined;
  };
  WebhookDelivery: {
    delivery_id: string;
    event_type: string;
    action: string | null;
    repo: string | null;
    outcome: "received" | "processing" | "tasks_created" | "ignored" | "rejected" | "failed";
    reason: string | null;
    task_ids: Array<string>;
    status_code: number;
    body_sha256: string;
    received_at: number;
    duplicate: boolean;
  };
}

export interface Paths {
  "/api/ping": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        status: "ok";
        service: "beaver";
        version: string;
        time: string;
      };
    };
  };
  "/api/workspaces": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        workspaces: Array<Schemas["Workspace"]>;
      };
    };
    post: {
      params: never;
      query: never;
      body: {
        id: string;
        name: string;
      };
      response: Schemas["Workspace"];
    };
  };
  "/api/tokens": {
    get: {
      params: never;
      query: { workspace_id?: string | number | boolean };
      body: never;
      response: {
        tokens: Array<Schemas["Token"]>;
      };
    };
    post: {
      params: never;
      query: never;
      body: {
        name: string;
        scopes: Array<"admin" | "member" | "read">;
        workspace_id?: string;
      };
      response: (Schemas["Token"]) & ({
        token: string;
      });
    };
  };
  "/api/tokens/{id}": {
    delete: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Token"];
    };
  };
  "/api/config": {
    get: {
      params: never;
      query: never;
      body: never;
      response: Schemas["WorkspaceConfig"];
    };
    put: {
      params: never;
      query: never;
      body: Schemas["WorkspaceConfig"];
      response: Schemas["WorkspaceConfig"];
    };
  };
  "/api/secrets/{name}": {
    put: {
      params: { name: string };
      query: never;
      body: {
        value: string;
      };
      response: {
        name: string;
        created: boolean;
      };
    };
    delete: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        name: string;
        deleted: true;
      };
    };
  };
  "/api/secrets": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        secrets: Array<Schemas["SecretMeta"]>;
      };
    };
  };
  "/api/skills": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        skills: Array<{
          [key: string]: unknown | undefined;
        }>;
      };
    };
  };
  "/api/skills/_gc": {
    post: {
      params: never;
      query: never;
      body: {
        grace_seconds?: number;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}": {
    get: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
    put: {
      params: { name: string };
      query: { draft?: string | number | boolean };
      body: {
        files: Array<{
          path: string;
          content: string;
          encoding?: "utf8" | "base64";
          executable?: boolean;
        }>;
        if_current_version?: string;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/upload": {
    put: {
      params: { name: string };
      query: { draft?: string | number | boolean };
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/versions": {
    get: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/versions/{version}": {
    get: {
      params: { name: string; version: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/versions/{version}/file": {
    get: {
      params: { name: string; version: string };
      query: { path: string | number | boolean };
      body: never;
      response: unknown;
    };
  };
  "/api/skills/{name}/rollback": {
    post: {
      params: { name: string };
      query: never;
      body: {
        version: string;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/disable": {
    post: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/enable": {
    post: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/candidates": {
    get: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/skills/{name}/stats": {
    get: {
      params: { name: string };
      query: never;
      body: never;
      response: Schemas["SkillStats"];
    };
  };
  "/api/plugins": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/sources": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/sources/{id}": {
    put: {
      params: { id: string };
      query: never;
      body: {
        owner: string;
        repo: string;
        ref?: string;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
    delete: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/sources/{id}/fetch": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/packages": {
    put: {
      params: never;
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/packages/{id}": {
    delete: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/sync": {
    post: {
      params: never;
      query: never;
      body: {
        plugin_id?: string;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/{id}/enable": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/{id}/pause": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/{id}/resume": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/{id}/disable": {
    post: {
      params: { id: string };
      query: never;
      body: {
        disable_linked_skills: true;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/plugins/{id}/skills/{skill}/adopt": {
    post: {
      params: { id: string; skill: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/drafts": {
    get: {
      params: never;
      query: { skill?: string | number | boolean; status?: string | number | boolean; before?: string | number | boolean; before_id?: string | number | boolean; limit?: string | number | boolean };
      body: never;
      response: {
        drafts: Array<{
          [key: string]: unknown | undefined;
        }>;
        next_before: number | null;
        next_before_id: string | null;
      };
    };
  };
  "/api/drafts/{id}": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/drafts/{id}/approve": {
    post: {
      params: { id: string };
      query: never;
      body: {
        skip_evaluation?: boolean;
        reason?: string;
        acknowledge?: Array<string>;
        override_regression?: boolean;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/drafts/{id}/reject": {
    post: {
      params: { id: string };
      query: never;
      body: {
        reason: string;
      };
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/drafts/{id}/regenerate": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/candidates": {
    get: {
      params: never;
      query: { kind?: string | number | boolean; status?: string | number | boolean; limit?: string | number | boolean };
      body: never;
      response: {
        candidates: Array<{
          [key: string]: unknown | undefined;
        }>;
      };
    };
  };
  "/api/candidates/run": {
    post: {
      params: never;
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/sessions/{id}/stream": {
    get: {
      params: { id: string };
      query: { last_seq?: string | number | boolean; include_hidden?: string | number | boolean; client_id?: string | number | boolean; device_id?: string | number | boolean; ticket?: string | number | boolean };
      body: never;
      response: unknown;
    };
  };
  "/api/sessions/{id}/stream-ticket": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        ticket: string;
        expires_at: number;
      };
    };
  };
  "/api/sessions/{id}/messages": {
    post: {
      params: { id: string };
      query: { wait?: string | number | boolean };
      body: {
        content: string;
        client_id?: string;
        source?: "steer" | "followUp";
        skills?: Array<string>;
        toolset?: "default" | "code";
      };
      response: Schemas["RunResult"];
    };
  };
  "/api/sessions/{id}/approvals/{approval_id}": {
    post: {
      params: { id: string; approval_id: string };
      query: never;
      body: {
        decision: "approve" | "deny";
        client_id?: string;
      };
      response: {
        approval_id: string;
        run_id: string;
        tool_name: string;
        decision: "approve" | "deny";
        event: Schemas["SessionEvent"];
      };
    };
  };
  "/api/sessions/{id}/feedback": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        feedback: Array<{
          run_id: string;
          rating: "up" | "down";
          comment: string | null;
        }>;
      };
    };
  };
  "/api/sessions/{id}/runs/{run_id}/receipt": {
    get: {
      params: { id: string; run_id: string };
      query: never;
      body: never;
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/api/sessions/{id}/runs/{run_id}/feedback": {
    post: {
      params: { id: string; run_id: string };
      query: never;
      body: Schemas["RunFeedback"];
      response: {
        run_id: string;
        rating: "up" | "down";
        comment: string | null;
        receipt: {
          [key: string]: unknown | undefined;
        } | null;
      };
    };
  };
  "/api/sessions/{id}/file-changes": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["WorkspaceFileChanges"];
    };
  };
  "/api/sessions/{id}/files": {
    get: {
      params: { id: string };
      query: { event?: string | number | boolean };
      body: never;
      response: Schemas["WorkspaceFiles"];
    };
  };
  "/api/sessions/{id}/files.tar.gz": {
    get: {
      params: { id: string };
      query: { event?: string | number | boolean };
      body: never;
      response: unknown;
    };
  };
  "/api/sessions/{id}/files/{path}": {
    get: {
      params: { id: string; path: string };
      query: { event?: string | number | boolean };
      body: never;
      response: unknown;
    };
  };
  "/api/sessions": {
    get: {
      params: never;
      query: { limit?: string | number | boolean; updated_before?: string | number | boolean; before_id?: string | number | boolean; status?: string | number | boolean; archived?: string | number | boolean; parent_session_id?: string | number | boolean };
      body: never;
      response: {
        sessions: Array<Schemas["SessionListItem"]>;
        next_updated_before: number | null;
        next_before_id: string | null;
      };
    };
    post: {
      params: never;
      query: never;
      body: {
        title?: string;
        metadata?: {
          [key: string]: unknown | undefined;
        };
        channel?: string;
      };
      response: Schemas["Session"];
    };
  };
  "/api/sessions/search": {
    get: {
      params: never;
      query: { q: string | number | boolean; limit?: string | number | boolean; cursor?: string | number | boolean; exclude_session_id?: string | number | boolean; include_archived?: string | number | boolean };
      body: never;
      response: {
        results: Array<{
          session_id: string;
          session_title: string;
          event_id: string;
          seq: number;
          type: string;
          ts: number;
          snippet: string;
          score: number;
        }>;
        next_cursor: string | null;
      };
    };
  };
  "/api/sessions/{id}": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Session"];
    };
    patch: {
      params: { id: string };
      query: never;
      body: {
        title?: string;
        archived?: boolean;
        channel?: string | null;
        client_id?: string;
      };
      response: Schemas["Session"];
    };
    delete: {
      params: { id: string };
      query: never;
      body: never;
      response: unknown;
    };
  };
  "/api/sessions/{id}/events": {
    get: {
      params: { id: string };
      query: { after_seq?: string | number | boolean; limit?: string | number | boolean; include_hidden?: string | number | boolean };
      body: never;
      response: {
        events: Array<Schemas["SessionEvent"]>;
        next_after_seq: number;
        has_more: boolean;
      };
    };
  };
  "/api/sessions/{id}/runs": {
    get: {
      params: { id: string };
      query: { limit?: string | number | boolean };
      body: never;
      response: {
        runs: Array<Schemas["Run"]>;
      };
    };
  };
  "/api/sessions/{id}/runs/{run_id}": {
    get: {
      params: { id: string; run_id: string };
      query: never;
      body: never;
      response: Schemas["Run"];
    };
  };
  "/api/sessions/{id}/runs/{run_id}/events": {
    get: {
      params: { id: string; run_id: string };
      query: { after_seq?: string | number | boolean; limit?: string | number | boolean; include_hidden?: string | number | boolean };
      body: never;
      response: {
        events: Array<Schemas["SessionEvent"]>;
        next_after_seq: number;
        has_more: boolean;
      };
    };
  };
  "/api/sessions/{id}/context": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        system: string;
        tools: Array<{
          name: string;
          description: string;
          input_schema: {
            [key: string]: unknown | undefined;
          };
        }>;
        tool_choices: Array<{
          name: string;
          reason: "always" | "configured" | "hinted" | "relevant";
          score?: number;
          ranked_by?: "embedding" | "keywords";
          hinted_by?: Array<string>;
        }> | null;
        messages: Array<Schemas["ContextMessage"]>;
        context_size: {
          tokens: number;
          source: "usage" | "estimate";
          usage_tokens?: number;
          trailing_tokens: number;
          fixed_tokens: number;
        };
        active_leaf: string | null;
      };
    };
  };
  "/api/sessions/{id}/transcript": {
    get: {
      params: { id: string };
      query: { limit?: string | number | boolean };
      body: never;
      response: {
        active_leaf: string | null;
        items: Array<Schemas["DisplayItem"]>;
      };
    };
  };
  "/api/sessions/{id}/tree": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        active_leaf: string | null;
        event_count: number;
        leaves: Array<{
          event_id: string;
          seq: number;
          ts: number;
          type: string;
          run_id: string | null;
          excerpt: string;
          active: boolean;
        }>;
      };
    };
  };
  "/api/sessions/{id}/rewind": {
    post: {
      params: { id: string };
      query: never;
      body: {
        target_event_id: string;
        client_id?: string;
      };
      response: {
        event: Schemas["SessionEvent"];
        active_leaf: string | null;
      };
    };
  };
  "/api/sessions/{id}/branch": {
    post: {
      params: { id: string };
      query: never;
      body: {
        leaf_event_id: string;
        client_id?: string;
      };
      response: {
        event: Schemas["SessionEvent"];
        active_leaf: string | null;
      };
    };
  };
  "/api/sessions/{id}/compact": {
    post: {
      params: { id: string };
      query: never;
      body: {
        keep_tokens?: number;
        client_id?: string;
      };
      response: {
        compacted: boolean;
        event: (Schemas["SessionEvent"]) & (Record<string, unknown> | null);
        reason: string | null;
        active_leaf: string | null;
      };
    };
  };
  "/api/sessions/{id}/cancel": {
    post: {
      params: { id: string };
      query: never;
      body: {
        run_id?: string;
      };
      response: {
        run_id: string | null;
        status: string | null;
      };
    };
  };
  "/api/sessions/{id}/close": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Session"];
    };
  };
  "/api/sessions/{id}/fork": {
    post: {
      params: { id: string };
      query: never;
      body: {
        event_id?: string;
        title?: string;
        client_id?: string;
      };
      response: Schemas["Session"];
    };
  };
  "/api/sessions/{id}/stop": {
    post: {
      params: { id: string };
      query: never;
      body: {
        timeout_ms?: number;
        client_id?: string;
      };
      response: Schemas["Session"];
    };
  };
  "/api/sessions/{id}/runs/{run_id}/retry": {
    post: {
      params: { id: string; run_id: string };
      query: never;
      body: {
        client_id?: string;
      };
      response: Schemas["SubmitAccepted"];
    };
  };
  "/api/chat": {
    post: {
      params: never;
      query: never;
      body: {
        message: string;
        session_id?: string;
        skills?: Array<string>;
      };
      response: Schemas["ChatResponse"];
    };
  };
  "/api/agents": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        agents: Array<Schemas["Agent"]>;
      };
    };
    post: {
      params: never;
      query: never;
      body: {
        id: string;
        gitea_username: string;
        roles: Array<"reviewer" | "developer" | "infra" | "supervisor">;
        model?: {
          provider: "openai-compatible" | "openai" | "anthropic" | "google" | "workers-ai";
          id: string;
          base_url?: string;
          api_key_secret?: string;
          context_window?: number;
          max_tokens?: number;
        } | null;
        gitea_token_secret?: string | null;
        skills?: Array<string>;
        enabled?: boolean;
      };
      response: Schemas["Agent"];
    };
  };
  "/api/agents/{id}": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Agent"];
    };
    patch: {
      params: { id: string };
      query: never;
      body: {
        gitea_username?: string;
        roles?: Array<"reviewer" | "developer" | "infra" | "supervisor">;
        model?: {
          provider: "openai-compatible" | "openai" | "anthropic" | "google" | "workers-ai";
          id: string;
          base_url?: string;
          api_key_secret?: string;
          context_window?: number;
          max_tokens?: number;
        } | null;
        gitea_token_secret?: string | null;
        skills?: Array<string>;
        enabled?: boolean;
      };
      response: Schemas["Agent"];
    };
  };
  "/api/teams": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        teams: Array<Schemas["Team"]>;
      };
    };
  };
  "/api/teams/{name}/runs": {
    post: {
      params: { name: string };
      query: never;
      body: {
        message: string;
      };
      response: Schemas["TeamRun"];
    };
  };
  "/api/teams/{name}/runs/{id}": {
    get: {
      params: { name: string; id: string };
      query: never;
      body: never;
      response: Schemas["TeamRun"];
    };
  };
  "/api/toolchain/deliveries": {
    get: {
      params: never;
      query: { outcome?: string | number | boolean; event_type?: string | number | boolean; before?: string | number | boolean; before_id?: string | number | boolean; limit?: string | number | boolean };
      body: never;
      response: {
        deliveries: Array<Schemas["ToolchainDelivery"]>;
        next_before: number | null;
        next_before_id: string | null;
      };
    };
  };
  "/api/toolchain/tasks": {
    get: {
      params: never;
      query: { status?: string | number | boolean; agent_id?: string | number | boolean; action_type?: string | number | boolean; repo?: string | number | boolean; before?: string | number | boolean; before_id?: string | number | boolean; limit?: string | number | boolean };
      body: never;
      response: {
        tasks: Array<Schemas["ToolchainTask"]>;
        next_before: number | null;
        next_before_id: string | null;
      };
    };
  };
  "/api/toolchain/tasks/{id}": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        task: Schemas["ToolchainTask"];
        comments: Array<Schemas["ToolchainTaskComment"]>;
        outputs: Array<Schemas["ToolchainTaskOutput"]>;
        history: Array<{
          [key: string]: unknown | undefined;
        }>;
      };
    };
  };
  "/api/toolchain/tasks/{id}/comments": {
    post: {
      params: { id: string };
      query: never;
      body: {
        body: string;
        comment_type?: string;
        author?: string;
      };
      response: Schemas["ToolchainTaskComment"];
    };
  };
  "/api/toolchain/tasks/{id}/outputs": {
    post: {
      params: { id: string };
      query: never;
      body: {
        content: string;
        type?: "text" | "markdown" | "json" | "diff" | "log";
      };
      response: Schemas["ToolchainTaskOutput"];
    };
  };
  "/api/toolchain/tasks/{id}/retry": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["ToolchainTask"];
    };
  };
  "/api/toolchain/tasks/{id}/cancel": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["ToolchainTask"];
    };
  };
  "/api/toolchain/dispatch": {
    post: {
      params: never;
      query: never;
      body: never;
      response: {
        started: number;
        finished: number;
        reminded: number;
      };
    };
  };
  "/api/mail": {
    get: {
      params: never;
      query: { status?: string | number | boolean; to_agent?: string | number | boolean; from_agent?: string | number | boolean; performative?: string | number | boolean; before?: string | number | boolean; before_id?: string | number | boolean; limit?: string | number | boolean };
      body: never;
      response: {
        mail: Array<Schemas["Mail"]>;
        next_before: number | null;
        next_before_id: string | null;
      };
    };
    post: {
      params: never;
      query: never;
      body: {
        from_agent: string;
        to_agent: string;
        performative: "inform" | "request";
        subject: string;
        body: string;
        in_reply_to?: string;
      };
      response: Schemas["Mail"];
    };
  };
  "/api/mail/{id}": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        mail: Schemas["Mail"];
        replies: Array<Schemas["Mail"]>;
        history: Array<{
          [key: string]: unknown | undefined;
        }>;
      };
    };
  };
  "/api/mail/{id}/reply": {
    post: {
      params: { id: string };
      query: never;
      body: {
        body: string;
      };
      response: Schemas["Mail"];
    };
  };
  "/api/mail/{id}/cancel": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Mail"];
    };
  };
  "/api/memory": {
    get: {
      params: never;
      query: { agent_id?: string | number | boolean };
      body: never;
      response: Schemas["Memory"];
    };
  };
  "/api/memory/history": {
    get: {
      params: never;
      query: { agent_id?: string | number | boolean; before?: string | number | boolean; limit?: string | number | boolean };
      body: never;
      response: {
        changes: Array<Schemas["MemoryChange"]>;
        next_before: number | null;
      };
    };
  };
  "/api/memory/{store}": {
    put: {
      params: { store: "notes" | "profile" };
      query: { agent_id?: string | number | boolean };
      body: {
        entries: Array<string>;
      };
      response: Schemas["MemoryStore"];
    };
  };
  "/api/memory/{store}/entries": {
    post: {
      params: { store: "notes" | "profile" };
      query: { agent_id?: string | number | boolean };
      body: {
        text: string;
      };
      response: {
        entry: Schemas["MemoryEntry"];
        store: Schemas["MemoryStore"];
      };
    };
  };
  "/api/memory/{store}/entries/{id}": {
    delete: {
      params: { store: "notes" | "profile"; id: string };
      query: { agent_id?: string | number | boolean };
      body: never;
      response: {
        entry: Schemas["MemoryEntry"];
        store: Schemas["MemoryStore"];
      };
    };
  };
  "/api/schedules": {
    get: {
      params: never;
      query: { session_id?: string | number | boolean };
      body: never;
      response: {
        schedules: Array<Schemas["Schedule"]>;
      };
    };
    post: {
      params: never;
      query: never;
      body: {
        session_id?: string;
        message: string;
        at?: string;
        cron?: string;
        timezone?: string;
      };
      response: Schemas["Schedule"];
    };
  };
  "/api/schedules/{id}": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Schedule"];
    };
    delete: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Schedule"];
    };
  };
  "/api/mcp/servers": {
    get: {
      params: never;
      query: { refresh?: string | number | boolean };
      body: never;
      response: {
        servers: Array<Schemas["McpServerStatus"]>;
      };
    };
  };
  "/api/mcp/client-metadata.json": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        client_id: string;
        client_name?: string;
        client_uri: string;
        redirect_uris: Array<string>;
        grant_types?: Array<string>;
        response_types?: Array<string>;
        token_endpoint_auth_method?: string;
      };
    };
  };
  "/api/mcp/servers/{name}/connect": {
    post: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        authorization_url: string | null;
      };
    };
  };
  "/api/mcp/oauth/callback": {
    post: {
      params: never;
      query: never;
      body: {
        code: string;
        state: string;
      };
      response: {
        server: string;
        status: "connected";
      };
    };
  };
  "/api/mcp/servers/{name}/connection": {
    delete: {
      params: { name: string };
      query: never;
      body: never;
      response: {
        server: string;
        forgotten: true;
      };
    };
  };
  "/api/usage": {
    get: {
      params: never;
      query: { days?: string | number | boolean; sessions?: string | number | boolean };
      body: never;
      response: {
        since: number;
        days: Array<Schemas["UsageRow"]>;
        models: Array<Schemas["UsageRow"]>;
        agents: Array<Schemas["UsageRow"]>;
        sessions: Array<Schemas["UsageRow"]>;
      };
    };
  };
  "/api/oauth/requests": {
    post: {
      params: never;
      query: never;
      body: {
        query: string;
      };
      response: Schemas["OAuthConsentRequest"];
    };
  };
  "/api/oauth/authorize": {
    post: {
      params: never;
      query: never;
      body: {
        query: string;
        workspace_id?: string;
        scopes: Array<"read" | "member">;
      };
      response: Schemas["OAuthRedirect"];
    };
  };
  "/api/oauth/deny": {
    post: {
      params: never;
      query: never;
      body: {
        query: string;
      };
      response: Schemas["OAuthRedirect"];
    };
  };
  "/api/oauth/grants": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        grants: Array<Schemas["OAuthGrant"]>;
      };
    };
  };
  "/api/oauth/grants/{id}": {
    delete: {
      params: { id: string };
      query: never;
      body: never;
      response: {
        id: string;
        revoked: true;
      };
    };
  };
  "/mcp": {
    post: {
      params: never;
      query: never;
      body: Schemas["JsonRpcMessage"] | Array<Schemas["JsonRpcMessage"]>;
      response: Schemas["JsonRpcMessage"] | Array<Schemas["JsonRpcMessage"]>;
    };
  };
  "/api/drafts/{id}/evaluate": {
    post: {
      params: { id: string };
      query: never;
      body: {
        concurrency?: number;
      };
      response: Schemas["Evaluation"];
    };
  };
  "/api/drafts/{id}/evaluation": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Evaluation"];
    };
  };
  "/api/drafts/{id}/evaluation/stream": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: unknown;
    };
  };
  "/api/drafts/{id}/evaluation/cancel": {
    post: {
      params: { id: string };
      query: never;
      body: never;
      response: Schemas["Evaluation"];
    };
  };
  "/v1/chat/completions": {
    post: {
      params: never;
      query: never;
      body: Schemas["ChatCompletionRequest"];
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/v1/responses": {
    post: {
      params: never;
      query: never;
      body: Schemas["ResponseRequest"];
      response: {
        [key: string]: unknown | undefined;
      };
    };
  };
  "/v1/models": {
    get: {
      params: never;
      query: never;
      body: never;
      response: {
        object: "list";
        data: Array<{
          id: string;
          object: "model";
          created: number;
          owned_by: string;
          description: string;
        }>;
      };
    };
  };
  "/v1/models/{model}": {
    get: {
      params: { model: string };
      query: never;
      body: never;
      response: {
        id: string;
        object: "model";
        created: number;
        owned_by: string;
        description: string;
      };
    };
  };
  "/api/ui/chat": {
    post: {
      params: never;
      query: never;
      body: {
        id: string;
        messages: Array<Schemas["UIMessage"]>;
        trigger?: "submit-message" | "regenerate-message";
        messageId?: string;
        skills?: Array<string>;
      };
      response: unknown;
    };
  };
  "/api/ui/chat/{id}/stream": {
    get: {
      params: { id: string };
      query: never;
      body: never;
      response: unknown;
    };
  };
  "/webhooks/gitea/{workspace_id}": {
    post: {
      params: { workspace_id: string };
      query: never;
      body: {
        [key: string]: unknown;
      };
      response: Schemas["WebhookDelivery"];
    };
  };
}
