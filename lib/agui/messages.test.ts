import { MessageSchema } from "@ag-ui/core/schemas";
import {
  AIMessage,
  ChatMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { toAguiContent, toAguiMessages } from "./index";

describe("toAguiMessages", () => {
  test("maps user, assistant with tool calls, tool and system messages, in order", () => {
    const messages = toAguiMessages([
      new SystemMessage({ id: "s1", content: "You handle refunds." }),
      new HumanMessage({ id: "h1", content: "Refund A-1001", name: "ada" }),
      new AIMessage({
        id: "a1",
        content: [
          { type: "text", text: "Looking " },
          { type: "text", text: "it up." },
        ],
        tool_calls: [{ id: "c1", name: "lookup_order", args: { orderId: "A-1001" }, type: "tool_call" }],
      }),
      new ToolMessage({ id: "t1", tool_call_id: "c1", content: "not found", status: "error" }),
      new AIMessage({ id: "a2", content: "" }),
      new ChatMessage({ id: "d1", role: "developer", content: "internal note" }),
    ]);
    expect(messages).toEqual([
      { id: "s1", role: "system", content: "You handle refunds." },
      { id: "h1", role: "user", name: "ada", content: "Refund A-1001" },
      {
        id: "a1",
        role: "assistant",
        content: "Looking it up.",
        toolCalls: [
          {
            id: "c1",
            type: "function",
            function: { name: "lookup_order", arguments: '{"orderId":"A-1001"}' },
          },
        ],
      },
      { id: "t1", role: "tool", toolCallId: "c1", content: "not found", error: "not found" },
      { id: "a2", role: "assistant" },
      { id: "d1", role: "developer", content: "internal note" },
    ]);
    for (const message of messages) expect(MessageSchema.parse(message)).toEqual(message);
  });

  test("keeps images as content parts", () => {
    const content = toAguiContent([
      { type: "text", text: "See photo" },
      { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0=" } },
      { type: "image_url", image_url: "https://example.com/a.jpg" },
    ]);
    expect(content).toEqual([
      { type: "text", text: "See photo" },
      { type: "image", source: { type: "data", mimeType: "image/png", value: "iVBORw0=" } },
      { type: "image", source: { type: "url", value: "https://example.com/a.jpg" } },
    ]);
    const [message] = toAguiMessages([new HumanMessage({ id: "h", content: [{ type: "text", text: "x" }] })]);
    expect(message).toEqual({ id: "h", role: "user", content: "x" });
  });

  test("fails loudly on a missing id, a missing tool call id and content it cannot carry", () => {
    expect(() => toAguiMessages([new HumanMessage("no id")])).toThrow(/human message has no id/);
    const call = new AIMessage({ id: "a", content: "", tool_calls: [{ name: "f", args: {} }] });
    expect(() => toAguiMessages([call])).toThrow(/tool call "f" of message a/);
    const audio = new HumanMessage({ id: "h", content: [{ type: "input_audio", input_audio: {} }] });
    expect(() => toAguiMessages([audio])).toThrow(/input_audio/);
    expect(() => toAguiMessages([new RemoveMessage({ id: "r" })])).toThrow(/remove/);
  });
});
