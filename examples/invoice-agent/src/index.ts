import { invoiceDisputeAgent } from "./agent";

/** Every version this package serves (one so far): the console registers each. */
export const agents = [invoiceDisputeAgent];
