export * from "./app";
export * from "./auth";
export * from "./checkpoints";
export * from "./instances";
export * from "./operations";
export * from "./queue";
export * from "./teams";
export * from "./vault";
