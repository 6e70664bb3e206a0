import fc from "fast-check";
import { CheckpointConfigError, readAddress, requireThread } from "./config";

const id = fc.string({ unit: "binary", minLength: 1 });
const notAString = fc.oneof(
  fc.boolean(),
  fc.object(),
  fc.array(fc.string()),
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
);

describe("checkpoint address", () => {
  it("reads thread, namespace and checkpoint id as given", () => {
    fc.assert(
      fc.property(id, fc.string({ unit: "binary" }), id, (thread_id, checkpoint_ns, checkpoint_id) => {
        expect(readAddress("get", { configurable: { thread_id, checkpoint_ns, checkpoint_id } })).toEqual({
          threadId: thread_id,
          checkpointNs: checkpoint_ns,
          checkpointId: checkpoint_id,
        });
      }),
    );
  });

  it("treats missing, null and empty fields as absent (root namespace), and finite numbers as their text", () => {
    expect(readAddress("list", undefined)).toEqual({
      threadId: undefined,
      checkpointNs: "",
      checkpointId: undefined,
    });
    expect(readAddress("list", { configurable: { thread_id: null, checkpoint_id: "" } })).toEqual({
      threadId: undefined,
      checkpointNs: "",
      checkpointId: undefined,
    });
    fc.assert(
      fc.property(fc.integer(), (n) => {
        expect(readAddress("get", { configurable: { thread_id: n } }).threadId).toBe(String(n));
      }),
    );
  });

  it("refuses a field of the wrong type, naming the operation and the field", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("thread_id", "checkpoint_ns", "checkpoint_id"),
        notAString,
        (field, value) => {
          const read = () => readAddress("putWrites", { configurable: { [field]: value } });
          expect(read).toThrow(CheckpointConfigError);
          expect(read).toThrow(new RegExp(`^putWrites: config\\.configurable\\.${field} must be a string`));
        },
      ),
    );
    expect(() => readAddress("get", { configurable: "x" as never })).toThrow(
      /configurable must be an object/,
    );
  });

  it("requires a thread where the operation needs one", () => {
    expect(() => requireThread("put", undefined)).toThrow(/configurable is missing/);
    expect(() => requireThread("put", { configurable: {} })).toThrow(/thread_id is required/);
    expect(requireThread("put", { configurable: { thread_id: "t" } })).toEqual({
      threadId: "t",
      checkpointNs: "",
      checkpointId: undefined,
    });
  });
});
