/**
 * The `toolchain` section of the workspace configuration (Gitea webhook target).
 * Secrets are referenced by name (workspace secret store, falling back to Worker secrets).
 */
import { z } from "zod";

const secretName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be a secret name");

export const ToolchainConfigSchema = z.strictObject({
  gitea_base_url: z.url({ protocol: /^https?$/ }).optional(),
  webhook_secret: secretName.optional(),
  gitea_token_secret: secretName.optional(),
});
export type ToolchainConfig = z.infer<typeof ToolchainConfigSchema>;
