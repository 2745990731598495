/**
 * The `mcp` section of the workspace configuration (docs/mcp.md): the MCP servers whose tools a
 * workspace's runs get. Header values are never stored here, only the names of workspace secrets that
 * hold them (resolved per connection, README "Secrets"). The `url` passes the egress policy on save
 * (its key ends in `url`, storage/egress.ts) and again on every request (storage/outbound.ts).
 */
import { z } from "zod";
import { SecretNameSchema, type ConfigSection, type WorkspaceConfig } from "../../storage/config/schema.ts";
import { deepFreeze, memoByObject } from "../../kernel/memo.ts";

/** Letters and digits, single `-` or `_` between them: a server name never contains the `__` separator of tool names. */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*$/;

/** Headers the transport sets itself (or HTTP owns): a configured value must not replace them. */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "accept",
  "connection",
  "transfer-encoding",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, "must be an HTTP header name")
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), "is set by the MCP transport and cannot be configured");

/** An MCP tool name or a glob over them (`*` matches any run of characters). */
const ToolPattern = z.string().min(1).max(128);

export const McpServerSchema = z.strictObject({
  /** Names the server's tools: `mcp__<name>__<tool>`. */
  name: z.string().max(32).regex(SERVER_NAME_PATTERN, "must be letters and digits, with single '-' or '_' between them"),
  url: z.url({ protocol: /^https?$/ }),
  /** `streamable-http` (the current MCP transport) or `sse` (the 2024-11-05 HTTP+SSE transport of older servers). */
  transport: z.enum(["streamable-http", "sse"]).default("streamable-http"),
  /** Header name → name of the workspace secret holding its value (for example `Authorization` → `MCP_TOKEN`). */
  headers: z
    .record(HeaderName, SecretNameSchema)
    .refine((h) => Object.keys(h).length <= 16, "at most 16 headers")
    .default({}),
  /**
   * `oauth`: Beaver runs MCP's authorization flow as a client (discovery, registration, PKCE, refresh;
   * docs/mcp.md, "Connect a hosted MCP server"); the console's Connect starts it. Absent: `headers` only.
   */
  auth: z.literal("oauth").optional(),
  /**
   * With `auth: "oauth"`: the server is personal — each member (API token) connects their own account,
   * and a run uses the tokens of whoever sent its message (docs/mcp.md, "Personal servers"). Absent or
   * false: one connection for the whole workspace.
   */
  personal: z.boolean().optional(),
  /**
   * With `auth: "oauth"`: a client the server's authorization server issued out of band (it offers no
   * dynamic registration, or wants known clients). Beaver uses it instead of registering; the secret
   * (absent for a public client) is the name of a workspace secret, like `api_key_secret` (docs/mcp.md,
   * "Pre-registered clients").
   */
  oauth: z
    .strictObject({
      client_id: z.string().min(1).max(1_024),
      client_secret_secret: SecretNameSchema.optional(),
    })
    .optional(),
  /** Only these tools (names or globs); absent = all tools the server lists. */
  allow_tools: z.array(ToolPattern).max(100).optional(),
  /** Never these tools (names or globs); wins over `allow_tools`. */
  deny_tools: z.array(ToolPattern).max(100).default([]),
  /** Each connection, discovery and tool call is abandoned after this long (a tool error, never a failed run). */
  timeout_ms: z.number().int().min(100).max(120_000).default(30_000),
});
export type McpServerConfig = z.infer<typeof McpServerSchema>;

export const McpConfigSchema = z.strictObject({
  servers: z
    .array(McpServerSchema)
    .max(20)
    .default([])
    .superRefine((servers, ctx) => {
      const seen = new Set<string>();
      servers.forEach((s, i) => {
        if (s.personal && s.auth !== "oauth")
          ctx.addIssue({
            code: "custom",
            path: [i, "personal"],
            message: 'needs auth: "oauth" (personal servers hold OAuth tokens per member)',
          });
        if (s.oauth && s.auth !== "oauth")
          ctx.addIssue({ code: "custom", path: [i, "oauth"], message: 'needs auth: "oauth" (a pre-registered OAuth client)' });
        const key = s.name.toLowerCase();
        if (seen.has(key)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `duplicate server name '${s.name}'` });
        seen.add(key);
      });
    }),
});
export type McpConfig = z.infer<typeof McpConfigSchema>;

/** The `mcp` section as registered with the workspace configuration (src/app/config.ts). */
export const mcpConfigSection: ConfigSection = { key: "mcp", schema: McpConfigSchema };

/** The workspace's MCP section with defaults applied; an absent or unreadable one means no servers. */
export const mcpConfigOf: (config: WorkspaceConfig) => McpConfig = memoByObject((config) => {
  const parsed = McpConfigSchema.safeParse((config as Record<string, unknown>).mcp ?? {});
  return deepFreeze(parsed.success ? parsed.data : { servers: [] });
});
