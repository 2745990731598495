/**
 * How the messages an OpenAI client sends become one Beaver run (docs/openai-api.md, "Messages and
 * sessions"). Pure: data in, data out.
 *
 * A Beaver session keeps its own history; OpenAI clients that do not know it resend the whole
 * conversation each time. So a request is split into: the last user message (the run's message, stored
 * in the session), the system/developer messages (this run's extra instructions, never stored as
 * messages), and the earlier turns. Earlier turns reach the model only when the session does not have
 * them already (a new session): then they are rendered, labelled as provided by the client, into the
 * run's extra instructions. When the request continues a session, the session's own log is the
 * history and the resent turns are ignored.
 */
import { AppError } from "../../../kernel/errors.ts";

/** One message as both APIs carry it once its content is reduced to text. */
export interface ClientMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  text: string;
}

export interface RunConversation {
  /** The run's user message. */
  content: string;
  /** System and developer messages, in order (this run's instructions). */
  instructions: string[];
  /** Earlier turns the session does not have (empty when it continues a session). */
  history: ClientMessage[];
}

/** Text parts a client may send: `{type: "text" | "input_text" | "output_text", text}`; anything else (images, audio, files) is refused. */
export function contentText(content: unknown, param: string): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (!Array.isArray(content)) throw refused(param, "must be a string or an array of text parts");
  return content
    .map((part: unknown, i) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (p && (p.type === "text" || p.type === "input_text" || p.type === "output_text") && typeof p.text === "string") return p.text;
      const type = p && typeof p.type === "string" ? p.type : typeof part;
      throw refused(`${param}.${i}`, `content part type '${type}' is not supported; Beaver takes text only`);
    })
    .join("");
}

/**
 * Splits `messages` (in order) into a run. `continuesSession`: the session already holds the earlier
 * turns (a named session, or `previous_response_id` with only new input), so earlier turns the client
 * sent are not repeated — unless `historyIsNew` says they are new input (the Responses API sends only
 * new items after a previous response).
 */
export function toRunConversation(messages: ClientMessage[], opts: { continuesSession: boolean; historyIsNew?: boolean }): RunConversation {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "user") throw refused("messages", "the last message must come from the user (role 'user')");
  if (last.text.trim() === "") throw refused("messages", "the last user message is empty");
  const instructions = messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => m.text);
  const turns = messages.slice(0, -1).filter((m) => m.role !== "system" && m.role !== "developer" && m.text !== "");
  const keepHistory = !opts.continuesSession || opts.historyIsNew === true;
  return { content: last.text, instructions, history: keepHistory ? turns : [] };
}

/**
 * The run's extra system prompt section: the client's instructions, then the earlier turns as a
 * transcript the model is told came from the client. Undefined when there is neither.
 */
export function runInstructions(conversation: RunConversation): string | undefined {
  const parts: string[] = [];
  const instructions = conversation.instructions.filter((t) => t.trim() !== "");
  if (instructions.length > 0) parts.push(`# Instructions from the API client\n\n${instructions.join("\n\n")}`);
  if (conversation.history.length > 0) {
    const lines = conversation.history.map((m) => `[${m.role}]\n${m.text}`);
    parts.push(
      "# Earlier conversation (sent by the API client; not in this session's log)\n\n" +
        "The client resent these earlier turns of its conversation. Treat them as what was said before the user's message.\n\n" +
        lines.join("\n\n"),
    );
  }
  return parts.length > 0 ? parts.join("\n\n") : undefined;
}

/** A 400 for an OpenAI request Beaver cannot honour; `param` names the field (OpenAI's error `param`). */
export function refused(param: string, message: string): AppError {
  return new AppError("bad_request", `${param}: ${message}`, { details: { param } });
}
