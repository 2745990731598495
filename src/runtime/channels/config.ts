/**
 * The `channels` section of the workspace configuration (docs/channels.md, "Outbound"): where a
 * session bound to a channel posts each run's result. One kind so far, `webhook`: an HTTPS (or HTTP)
 * URL, checked against the egress policy when saved (its key ends in `url`, storage/egress.ts) and on
 * every post (storage/outbound.ts), and the name of a workspace secret that signs the posts.
 */
import { z } from "zod";
import { SecretNameSchema, type WorkspaceConfig } from "../../storage/config/schema.ts";
import { deepFreeze, memoByObject } from "../../kernel/memo.ts";

export const CHANNEL_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

export const ChannelSchema = z.strictObject({
  name: z.string().regex(CHANNEL_NAME_PATTERN, "must be 1-64 lowercase letters, digits, '-' or '_', starting with a letter"),
  kind: z.literal("webhook"),
  url: z.url({ protocol: /^https?$/ }),
  /** The workspace secret whose value keys the HMAC-SHA256 signature of each post. */
  secret_name: SecretNameSchema,
});
export type ChannelConfig = z.infer<typeof ChannelSchema>;

export const ChannelsSchema = z
  .array(ChannelSchema)
  .max(20)
  .superRefine((channels, ctx) => {
    const seen = new Set<string>();
    channels.forEach((c, i) => {
      if (seen.has(c.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `channel '${c.name}' is named twice` });
      seen.add(c.name);
    });
  });

export const CHANNELS_KEY = "channels";

/** The workspace's channels as stored (validated on write); anything unreadable is no channels. */
export const channelsOf: (config: WorkspaceConfig) => readonly ChannelConfig[] = memoByObject((config) => {
  const parsed = ChannelsSchema.safeParse((config as Record<string, unknown>)[CHANNELS_KEY]);
  return deepFreeze(parsed.success ? parsed.data : []);
});
