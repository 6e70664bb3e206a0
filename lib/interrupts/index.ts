export * from "./contract";
export * from "./fingerprint";
export * from "./validate";
