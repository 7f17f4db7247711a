// Mastra as an agent: @mastra/core + @mastra/mcp + @ai-sdk/anthropic.
//
//   node t/e2e/sdk/mastra.mjs CONFIG.json
//
// CONFIG as for aisdk.mjs.  Tools are named SERVER_TOOL.  Prints
// {"final": TEXT} on stdout.

import fs from "node:fs";
import { Agent } from "@mastra/core/agent";
import { MCPClient } from "@mastra/mcp";
import { createAnthropic } from "@ai-sdk/anthropic";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const mcp = new MCPClient({ id: "toolsearch-e2e", servers: config.servers });
try {
    const tools = await mcp.listTools();
    const model = createAnthropic({ baseURL: config.url + "/v1",
                                    apiKey: "sk-ant-test" })(config.model);
    const agent = new Agent({ id: "e2e", name: "e2e",
                              instructions: "You are a helpful agent.",
                              model, tools });
    const r = config.stream
        ? await (await agent.stream(config.prompt, { maxSteps: 5 })).text
        : (await agent.generate(config.prompt, { maxSteps: 5 })).text;
    console.log(JSON.stringify({ final: r }));
} finally {
    await mcp.disconnect();
}
