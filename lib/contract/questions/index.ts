export * from "./contract";
export * from "./tool-review";
export * from "./validate";
