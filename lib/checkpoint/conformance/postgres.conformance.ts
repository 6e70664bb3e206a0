import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { initializer } from "@/e2e/support/backends";

const init = initializer("postgres");
validate(init);
deltaChannelHistoryTests(init);
