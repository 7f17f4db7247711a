// The Vercel AI SDK as an agent: ai + @ai-sdk/anthropic + @ai-sdk/mcp.
//
//   node t/e2e/sdk/aisdk.mjs CONFIG.json
//
// CONFIG: {"url", "model", "prompt", "stream", "api", "servers": {NAME:
// {"command", "args", "env"}}}.  Tools keep their bare MCP names.  With
// "api": "chat", the model is @ai-sdk/openai-compatible's (OpenAI's Chat
// Completions, as opencode and kilo use it), else @ai-sdk/anthropic's.
// Prints {"final": TEXT} on stdout.

import fs from "node:fs";
import { generateText, streamText, stepCountIs } from "ai";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function provider(config) {
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
    const args = { model, tools, prompt: config.prompt,
                   system: "You are a helpful agent.",
                   stopWhen: stepCountIs(5), maxRetries: 0 };
    let text;
    if (config.stream) {
        const r = streamText(args);
        text = await r.text;
    } else {
        text = (await generateText(args)).text;
    }
    console.log(JSON.stringify({ final: text }));
} finally {
    for (const c of clients) {
        await c.close();
    }
}
