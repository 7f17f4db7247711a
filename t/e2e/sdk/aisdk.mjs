// The Vercel AI SDK as an agent: ai + @ai-sdk/anthropic + @ai-sdk/mcp.
//
//   node t/e2e/sdk/aisdk.mjs CONFIG.json
//
// CONFIG: {"url", "model", "prompt", "more", "stream", "api", "servers":
// {NAME: {"command", "args", "env"}}}.  Tools keep their bare MCP names.
// With "api": "chat", the model is @ai-sdk/openai-compatible's (OpenAI's
// Chat Completions, as opencode and kilo use it); with "responses",
// @ai-sdk/openai's Responses model with its default store (on: later
// turns refer to earlier items by item_reference); else
// @ai-sdk/anthropic's.  "more": user prompts of later turns, each sent
// with the conversation so far.  Prints {"final": TEXT} on stdout.

import fs from "node:fs";
import { generateText, streamText, stepCountIs } from "ai";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function provider(config) {
    if (config.api === "responses") {
        const { createOpenAI } = await import("@ai-sdk/openai");
        return createOpenAI({ baseURL: config.url + "/v1",
                              apiKey: "sk-test" }).responses(config.model);
    }
    if (config.api === "chat") {
        const { createOpenAICompatible } =
            await import("@ai-sdk/openai-compatible");
        return createOpenAICompatible({
            name: "gateway", baseURL: config.url + "/v1",
            apiKey: "sk-test", includeUsage: true,
        }).chatModel(config.model);
    }
    const { createAnthropic } = await import("@ai-sdk/anthropic");
    return createAnthropic({ baseURL: config.url + "/v1",
                             apiKey: "sk-ant-test" })(config.model);
}

const clients = [];
let tools = {};
try {
    for (const s of Object.values(config.servers)) {
        const c = await createMCPClient({
            transport: new Experimental_StdioMCPTransport(s),
        });
        clients.push(c);
        tools = { ...tools, ...(await c.tools()) };
    }
    const model = await provider(config);
    const messages = [];
    let text;
    for (const prompt of [config.prompt, ...(config.more || [])]) {
        messages.push({ role: "user", content: prompt });
        const args = { model, tools, messages,
                       system: "You are a helpful agent.",
                       stopWhen: stepCountIs(5), maxRetries: 0 };
        let response;
        if (config.stream) {
            const r = streamText(args);
            text = await r.text;
            response = await r.response;
        } else {
            const r = await generateText(args);
            text = r.text;
            response = r.response;
        }
        messages.push(...response.messages);
    }
    console.log(JSON.stringify({ final: text }));
} finally {
    for (const c of clients) {
        await c.close();
    }
}
