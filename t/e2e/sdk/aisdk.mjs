// The Vercel AI SDK as an agent: ai + @ai-sdk/anthropic + @ai-sdk/mcp.
//
//   node t/e2e/sdk/aisdk.mjs CONFIG.json
//
// CONFIG: {"url", "model", "prompt", "stream", "servers": {NAME:
// {"command", "args", "env"}}}.  Tools keep their bare MCP names.  Prints
// {"final": TEXT} on stdout.

import fs from "node:fs";
import { generateText, streamText, stepCountIs } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
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
    const model = createAnthropic({ baseURL: config.url + "/v1",
                                    apiKey: "sk-ant-test" })(config.model);
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
