/**
 * What the model is sent, from the session's messages (the context built from the event log), in
 * two steps: `conversationForModel` settles the content — providers reject a conversation in which a
 * tool call has no result, so a call left without one (an interrupted run) gets an error result, a
 * result whose call is not in the context is left out, and only what a provider reads is kept —
 * and `toModelMessages` maps that one to one onto the `ai` SDK's `ModelMessage`s. `GET /context`
 * shows the first step's output, so it is exactly what the model gets, in the API's snake_case.
 */
import type { ModelMessage, ToolModelMessage } from "ai";
import type { AssistantMessage, Message, ToolResultMessage } from "../session/events.ts";
import { wrapSystemReminder } from "../session/system-reminder.ts";

type ToolResultPart = ToolModelMessage["content"][number] & { type: "tool-result" };

/** Content of the synthetic result given to a call that never got one. */
export const MISSING_RESULT_TEXT = "Error (interrupted): this tool call has no recorded result; it was interrupted before it finished.";

/**
 * Opens a conversation whose window (`max_context_messages`) begins mid-turn: several providers
 * reject a conversation that does not start with a user message.
 */
export const EARLIER_OMITTED_TEXT = wrapSystemReminder("Earlier messages of this session are not included here.");

/**
 * The conversation the model receives: user messages as their text, assistant messages as their text
 * and calls (reasoning is not sent back: providers that accept it want their own signed blocks, which
 * the log does not keep; a message with neither text nor calls is dropped, providers reject it), and
 * after each assistant message with calls exactly one result per call, in the order recorded.
 */
export function conversationForModel(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  /** Calls of the latest assistant message still waiting for their result, by id → tool name. */
  let pending = new Map<string, string>();

  const closeToolTurn = () => {
    for (const [id, name] of pending) out.push(toolResult(id, name, MISSING_RESULT_TEXT, true));
    pending = new Map();
  };

  for (const message of messages) {
    switch (message.role) {
      case "tool_result":
        if (pending.delete(message.tool_call_id))
          out.push(toolResult(message.tool_call_id, message.tool_name, message.content, message.is_error));
        break;
      case "user":
        closeToolTurn();
        out.push({ role: "user", content: message.content });
        break;
      case "assistant": {
        closeToolTurn();
        if (message.text.length > 0 || message.tool_calls.length > 0)
          out.push({ role: "assistant", text: message.text, tool_calls: message.tool_calls });
        for (const call of message.tool_calls) pending.set(call.id, call.name);
        break;
      }
    }
  }
  closeToolTurn();
  if (out.length > 0 && out[0]!.role !== "user") out.unshift({ role: "user", content: EARLIER_OMITTED_TEXT });
  return out;
}

/** `conversationForModel` as `ai` SDK messages: the results that follow one assistant message form one tool message. */
export function toModelMessages(messages: readonly Message[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const message of conversationForModel(messages)) {
    switch (message.role) {
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      case "assistant":
        out.push({ role: "assistant", content: assistantParts(message) });
        break;
      case "tool_result": {
        const last = out.at(-1);
        const part = resultPart(message);
        if (last?.role === "tool") last.content.push(part);
        else out.push({ role: "tool", content: [part] });
        break;
      }
    }
  }
  return out;
}

function assistantParts(message: AssistantMessage): Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string> {
  const content: Exclude<Extract<ModelMessage, { role: "assistant" }>["content"], string> = [];
  if (message.text.length > 0) content.push({ type: "text", text: message.text });
  for (const call of message.tool_calls) {
    content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.args ?? {} });
  }
  return content;
}

function toolResult(toolCallId: string, toolName: string, content: string, isError: boolean): ToolResultMessage {
  return { role: "tool_result", tool_call_id: toolCallId, tool_name: toolName, content, is_error: isError };
}

function resultPart(message: ToolResultMessage): ToolResultPart {
  const { tool_call_id: toolCallId, tool_name: toolName, content: value, is_error: isError } = message;
  return { type: "tool-result", toolCallId, toolName, output: isError ? { type: "error-text", value } : { type: "text", value } };
}
