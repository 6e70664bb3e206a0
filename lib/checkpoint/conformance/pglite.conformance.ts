import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { initializer } from "@/e2e/support/backends";

const init = initializer("pglite");
validate(init);
deltaChannelHistoryTests(init);
