export * from "./contract";
export * from "./validate";
