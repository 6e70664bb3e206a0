import { EventType } from "@ag-ui/core";
import { EventSchemas } from "@ag-ui/core/schemas";
import type { AguiEvent } from "./index";
import { encodeSse, withSeq } from "./index";

const event: AguiEvent = {
  type: EventType.TEXT_MESSAGE_CONTENT,
  messageId: "m1",
  delta: "héllo\nworld",
  timestamp: 1,
  metadata: { source: "test" },
};

describe("encodeSse", () => {
  test("writes id: <seq>, then one data line that parses back to the event with metadata.seq", () => {
    const frame = encodeSse(event, 7);
    expect(frame.startsWith("id: 7\ndata: ")).toBe(true);
    expect(frame.endsWith("\n\n")).toBe(true);
    const lines = frame.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    const parsed = EventSchemas.parse(JSON.parse(lines[1]!.slice("data: ".length)));
    expect(parsed).toEqual({ ...event, metadata: { source: "test", seq: 7 } });
    expect(parsed.metadata).not.toHaveProperty("ag-ui");
  });

  test("withSeq keeps other metadata, leaves the input alone, and rejects a bad seq", () => {
    expect(withSeq(event, 0).metadata).toEqual({ source: "test", seq: 0 });
    expect(withSeq({ ...event, metadata: undefined }, 3).metadata).toEqual({ seq: 3 });
    expect(event.metadata).toEqual({ source: "test" });
    expect(() => withSeq(event, -1)).toThrow(/seq/);
    expect(() => withSeq(event, 1.5)).toThrow(/seq/);
  });
});
