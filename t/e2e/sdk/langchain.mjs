// LangChain.js as an agent: langchain + @langchain/anthropic +
// @langchain/mcp-adapters.
//
//   node t/e2e/sdk/langchain.mjs CONFIG.json
//
// CONFIG as for aisdk.mjs.  Tools keep their bare MCP names.  Prints
// {"final": TEXT} on stdout.

import fs from "node:fs";
import { createAgent } from "langchain";
import { ChatAnthropic } from "@langchain/anthropic";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const servers = {};
for (const [name, s] of Object.entries(config.servers)) {
    servers[name] = { transport: "stdio", ...s };
}
const mcp = new MultiServerMCPClient({ mcpServers: servers,
                                       useStandardContentBlocks: true });
try {
    const tools = await mcp.getTools();
    const model = new ChatAnthropic({ model: config.model,
                                      anthropicApiUrl: config.url,
                                      apiKey: "sk-ant-test", maxRetries: 0,
                                      streaming: !!config.stream });
    const agent = createAgent({ model, tools,
                                systemPrompt: "You are a helpful agent." });
    const out = await agent.invoke({ messages: [
        { role: "user", content: config.prompt }] });
    const last = out.messages[out.messages.length - 1];
    const text = typeof last.content === "string" ? last.content
        : last.content.filter((b) => b.type === "text")
              .map((b) => b.text).join("");
    console.log(JSON.stringify({ final: text }));
} finally {
    await mcp.close();
}
