import { EventType } from "@ag-ui/core";
import { checkEvents, typesOf } from "@/e2e/support/agui-fixtures/check-events";
import { chunk, harness, ns, tcc } from "@/e2e/support/agui-fixtures/harness";
import { RUN_RECOVERED_EVENT } from "@/lib/contract/wire";
import type { AguiEvent } from "./events";
import { closeOpenEvents, runWasStarted } from "./recovery";

describe("closing what a crashed run left open", () => {
  it("closes open text, tool calls and steps so the recovered run can repeat the node", async () => {
    const crashed = harness();
    crashed.task("t1", "classify");
    crashed.done("t1", "classify");
    crashed.task("t2", "write_reply");
    crashed.push("messages", [chunk({ id: "m1", content: "Dear Anna, " }), ns("write_reply", "t2")]);
    crashed.push("messages", [
      chunk({
        id: "m1",
        content: "",
        tool_call_chunks: [tcc({ id: "c1", name: "lookup", args: "{", index: 0 })],
      }),
      ns("write_reply", "t2"),
    ]);
    // The process dies here. A new owner closes what was open, says it recovered, and re-runs the node.
    const closing = closeOpenEvents(crashed.events, 1_750_000_000_000);
    expect(typesOf(closing)).toEqual(["TEXT_MESSAGE_END", "TOOL_CALL_END", "STEP_FINISHED"]);
    const recovered = harness();
    recovered.task("t3", "write_reply");
    recovered.push("messages", [
      chunk({ id: "m2", content: "Dear Anna, your refund…" }),
      ns("write_reply", "t3"),
    ]);
    recovered.done("t3", "write_reply");
    recovered.finish();
    const marker: AguiEvent = { type: EventType.CUSTOM, name: RUN_RECOVERED_EVENT, value: { attempt: 2 } };
    const log = [...crashed.events, ...closing, marker, ...recovered.events.slice(1)];
    await checkEvents(log);
  });

  it("closes nothing for a run that left nothing open, and tells whether RUN_STARTED was logged", () => {
    const h = harness();
    h.task("t1", "classify");
    h.done("t1", "classify");
    expect(closeOpenEvents(h.events)).toEqual([]);
    expect(runWasStarted(h.events)).toBe(true);
    expect(runWasStarted([])).toBe(false);
  });
});
