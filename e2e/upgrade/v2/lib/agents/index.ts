import "server-only";
import { accountChangeAgent } from "@/lib/agents/account-change/agent";
import { goodwillAgent } from "@/lib/agents/goodwill/agent";
import { orderSupportAgent } from "@/lib/agents/order-support/agent";
import { refundAgent } from "@/lib/agents/refund/agent";
import { refundAgent as refundAgentV1 } from "@/lib/agents/refund/versions/v1/agent";
import { registerAgent } from "@/lib/runtime/agents/registry";

/*
 * Version 2 of the app's agents (the upgrade suite's second tree): refund 2 (with a migration from 1) and refund 1
 * kept from its versions folder for the threads pinned to it; goodwill 2 only (version 1 retired without a migration);
 * account change 3 only (version 2 not kept: its declared migration fails); order support as it is. The guide's
 * agents are added below by the suite, as the README says.
 */
registerAgent(refundAgentV1);
registerAgent(refundAgent);
registerAgent(accountChangeAgent);
registerAgent(goodwillAgent);
registerAgent(orderSupportAgent);

/** The id of the agent a ticket gets when its request names none. */
export const DEFAULT_AGENT_ID = refundAgent.id;
