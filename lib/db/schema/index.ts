export * from "./checkpoints";
