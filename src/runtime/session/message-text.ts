/** The human-readable text of a message, shared by display, search and previews. */
import type { Message } from "./events.ts";

export function messageText(message: Message): string {
  switch (message.role) {
    case "user":
    case "tool_result":
      return message.content;
    case "assistant":
      return message.text;
  }
}

/** One-line excerpt for notices ("Rewound to “…”"); whitespace collapsed, cut at `max` characters. */
export function excerpt(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
