/**
 * Converts the session's messages (the context built from the event log) into the `ai` SDK's
 * `ModelMessage` list. Providers reject a conversation in which a tool call has no result, so the
 * conversion also keeps call/result pairing intact: a call left without a result (an interrupted
 * run) gets an error result, and a result whose call is not in the context is left out.
 */
import type { ModelMessage, ToolModelMessage } from "ai";
import type { AssistantMessage, Message, ToolResultMessage } from "../session/events.ts";

type ToolResultPart = ToolModelMessage["content"][number] & { type: "tool-result" };

/** Content of the synthetic result given to a call that never got one. */
export const MISSING_RESULT_TEXT = "Error (interrupted): this tool call has no recorded result; it was interrupted before it finished.";

export function toModelMessages(messages: Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  /** Calls of the latest assistant message still waiting for their result, by id → tool name. */
  let pending = new Map<string, string>();
  let results: ToolResultPart[] = [];

  const closeToolTurn = () => {
    for (const [id, name] of pending) results.push(resultPart(id, name, MISSING_RESULT_TEXT, true));
    if (results.length > 0) out.push({ role: "tool", content: results });
    pending = new Map();
    results = [];
  };

  for (const message of messages) {
    switch (message.role) {
      case "tool_result":
        if (pending.delete(message.tool_call_id)) results.push(toResultPart(message));
        break;
      case "user":
        closeToolTurn();
        out.push({ role: "user", content: message.content });
        break;
      case "assistant": {
        closeToolTurn();
        const converted = toAssistant(message);
        if (converted) out.push(converted);
        for (const call of message.tool_calls) pending.set(call.id, call.name);
        break;
      }
    }
  }
  closeToolTurn();
  return out;
}

/**
 * Reasoning is not sent back: providers that accept it want their own signed blocks, which the log
 * does not keep. An assistant message with neither text nor calls is dropped (providers reject it).
 */
function toAssistant(message: AssistantMessage): ModelMessage | null {
  const content: Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string> = [];
  if (message.text.length > 0) content.push({ type: "text", text: message.text });
  for (const call of message.tool_calls) {
    content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args ?? {} });
  }
  return content.length > 0 ? { role: "assistant", content } : null;
}

function toResultPart(message: ToolResultMessage): ToolResultPart {
  return resultPart(message.tool_call_id, message.tool_name, message.content, message.is_error);
}

function resultPart(toolCallId: string, toolName: string, text: string, isError: boolean): ToolResultPart {
  return { type: "tool-result", toolCallId, toolName, output: isError ? { type: "error-text", value: text } : { type: "text", value: text } };
}
