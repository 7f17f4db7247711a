// LangChain.js as an agent: langchain + @langchain/mcp-adapters, and
// @langchain/anthropic or, with "api", @langchain/openai.
//
//   node t/e2e/sdk/langchain.mjs CONFIG.json
//
// CONFIG as for aisdk.mjs; "api": "chat" is ChatOpenAI on Chat
// Completions (its default), "responses" the same with useResponsesApi.
// Tools keep their bare MCP names.  Prints {"final": TEXT} on stdout.

import fs from "node:fs";
import { createAgent } from "langchain";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function chatModel(config) {
    if (config.api) {
        const { ChatOpenAI } = await import("@langchain/openai");
        const model = new ChatOpenAI({
            model: config.model, apiKey: "sk-test", maxRetries: 0,
            configuration: { baseURL: config.url + "/v1" },
            useResponsesApi: config.api === "responses",
            streaming: !!config.stream });
        // a streamed answer's usage is estimated with a tokenizer table
        // that LangChain fetches from the network: count offline instead,
        // in every model (ChatOpenAI delegates each API to another)
        const { BaseLanguageModel } =
            await import("@langchain/core/language_models/base");
        BaseLanguageModel.prototype.getNumTokens = async (content) =>
            Math.ceil(JSON.stringify(content).length / 4);
        return model;
    }
    const { ChatAnthropic } = await import("@langchain/anthropic");
    return new ChatAnthropic({ model: config.model,
                               anthropicApiUrl: config.url,
                               apiKey: "sk-ant-test", maxRetries: 0,
                               streaming: !!config.stream });
}

const servers = {};
for (const [name, s] of Object.entries(config.servers)) {
    servers[name] = { transport: "stdio", ...s };
}
const mcp = new MultiServerMCPClient({ mcpServers: servers,
                                       useStandardContentBlocks: true });
try {
    const tools = await mcp.getTools();
    const model = await chatModel(config);
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
