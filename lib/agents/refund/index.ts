import "server-only";

export { createOpenAiChatModel, getChatModel, type OpenAiChatModelOptions } from "./chat-model";
export { type Classification, classifyByRules, ORDER_REF_PATTERN } from "./classify-rules";
export {
  markEdited,
  REFUND_EDITABLE_FIELDS,
  REFUND_FORK_NODES,
  type RefundStateEdit,
  refundEditableState,
} from "./fork-rules";
export {
  buildRefundGraph,
  REFUND_NODES,
  type RefundGraph,
  type RefundGraphDeps,
  type RefundNodeName,
  refundGraphInput,
} from "./graph";
export { OfflineChatModel, type OfflineChatModelFields } from "./offline-model";
export { AUTO_APPROVE_LIMIT_CENTS, evaluatePolicy, REFUND_WINDOW_DAYS } from "./policy";
export * from "./state";
