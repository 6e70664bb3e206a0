import { pendingNodesOf } from "./migrate";

/*
 * Where a paused thread waits, read from its checkpoint alone (the version that wrote it may be gone): a node is
 * pending when its trigger channel holds a value newer than what the node has seen. Running a node consumes the
 * channel (its version moves on, its value is gone): such a node is not pending.
 */
describe("pendingNodesOf", () => {
  it("names the node whose trigger holds a value it has not seen", () => {
    expect(
      pendingNodesOf({
        channel_values: { "branch:to:human_review": null, order: { id: "ORD-1" } },
        channel_versions: { "branch:to:human_review": 7, "branch:to:check_policy": 6, order: 3 },
        versions_seen: { check_policy: { "branch:to:check_policy": 5 }, human_review: {} },
      }),
    ).toEqual(["human_review"]);
  });

  it("skips consumed triggers (newer version, no value) and triggers already seen", () => {
    expect(
      pendingNodesOf({
        channel_values: { "branch:to:write_reply": null },
        channel_versions: { "branch:to:classify": 9, "branch:to:write_reply": 4 },
        versions_seen: { classify: { "branch:to:classify": 2 }, write_reply: { "branch:to:write_reply": 4 } },
      }),
    ).toEqual([]);
  });

  it("compares string versions (as other savers write them) and lists parallel nodes in order", () => {
    expect(
      pendingNodesOf({
        channel_values: { "branch:to:fraud_review": null, "branch:to:data_review": null },
        channel_versions: {
          "branch:to:fraud_review": "00000000000000000000000000000003.0.5",
          "branch:to:data_review": "00000000000000000000000000000003.0.7",
        },
        versions_seen: { fraud_review: { "branch:to:fraud_review": "00000000000000000000000000000002.0.1" } },
      }),
    ).toEqual(["data_review", "fraud_review"]);
  });
});
