export * from "./app";
export * from "./checkpoints";
