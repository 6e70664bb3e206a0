import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import { initializer } from "../backends";

const init = initializer("pglite");
validate(init);
deltaChannelHistoryTests(init);
