// Mastra as an agent: @mastra/core + @mastra/mcp, and @ai-sdk/anthropic
// or, with "api", @ai-sdk/openai.
//
//   node t/e2e/sdk/mastra.mjs CONFIG.json
//
// CONFIG as for aisdk.mjs; "api": "chat" is the openai provider's Chat
// Completions model, "responses" its Responses model.  Tools are named
// SERVER_TOOL.  Prints {"final": TEXT} on stdout.

import fs from "node:fs";
import { Agent } from "@mastra/core/agent";
import { MCPClient } from "@mastra/mcp";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function languageModel(config) {
    if (config.api) {
        const { createOpenAI } = await import("@ai-sdk/openai");
        const openai = createOpenAI({ baseURL: config.url + "/v1",
                                      apiKey: "sk-test" });
        return config.api === "responses" ? openai.responses(config.model)
            : openai.chat(config.model);
    }
    const { createAnthropic } = await import("@ai-sdk/anthropic");
    return createAnthropic({ baseURL: config.url + "/v1",
                             apiKey: "sk-ant-test" })(config.model);
}

const mcp = new MCPClient({ id: "toolsearch-e2e", servers: config.servers });
try {
    const tools = await mcp.listTools();
    const model = await languageModel(config);
    const agent = new Agent({ id: "e2e", name: "e2e",
                              instructions: "You are a helpful agent.",
                              model, tools });
    let r;
    if (config.stream) {
        r = await (await agent.stream(config.prompt, { maxSteps: 5 })).text;
    } else {
        // generate's text joins every step's: the answer is the last's
        const out = await agent.generate(config.prompt, { maxSteps: 5 });
        r = out.steps?.length ? out.steps[out.steps.length - 1].text
            : out.text;
    }
    console.log(JSON.stringify({ final: r }));
} finally {
    await mcp.disconnect();
}
