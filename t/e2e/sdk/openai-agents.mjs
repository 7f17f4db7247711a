// The OpenAI Agents SDK (@openai/agents) as an agent, with the five MCP
// servers over stdio.
//
//   node t/e2e/sdk/openai-agents.mjs CONFIG.json
//
// CONFIG as for aisdk.mjs; "api": "chat" runs it on Chat Completions
// (setOpenAIAPI("chat_completions"), each turn with the whole history),
// else on the Responses API, where every turn after the first goes on
// from the last response (previousResponseId: only new items are sent,
// the upstream holds the rest), or with "conversation": true in a
// conversation made first through the Conversations API (conversationId
// on every turn: the upstream keeps every item, each request sends only
// new ones).  Prints {"final": TEXT} on stdout.

import fs from "node:fs";
import OpenAI from "openai";
import { Agent, MCPServerStdio, run, setDefaultOpenAIClient,
         setOpenAIAPI, setTracingDisabled } from "@openai/agents";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const chat = config.api === "chat";

setTracingDisabled(true);
const client = new OpenAI({ baseURL: config.url + "/v1", apiKey: "sk-test",
                            maxRetries: 0 });
setDefaultOpenAIClient(client);
const conversation = config.conversation
    ? (await client.conversations.create({})).id : undefined;
if (chat) {
    setOpenAIAPI("chat_completions");
}

const servers = [];
try {
    for (const [name, s] of Object.entries(config.servers)) {
        const server = new MCPServerStdio({ name, command: s.command,
                                            args: s.args, env: s.env });
        await server.connect();
        servers.push(server);
    }
    const agent = new Agent({ name: "Assistant", model: config.model,
                              instructions: "You are a helpful agent.",
                              mcpServers: servers });
    let result, text;
    for (const prompt of [config.prompt, ...(config.more || [])]) {
        const message = { role: "user", content: prompt };
        const input = chat && result ? [...result.history, message]
                                     : [message];
        const options = { stream: config.stream, maxTurns: 6 };
        if (conversation) {
            options.conversationId = conversation;
        } else if (!chat && result) {
            options.previousResponseId = result.lastResponseId;
        }
        result = await run(agent, input, options);
        if (config.stream) {
            for await (const event of result) {
                void event;
            }
            await result.completed;
        }
        text = result.finalOutput;
    }
    console.log(JSON.stringify({ final: text }));
} finally {
    for (const server of servers) {
        await server.close();
    }
}
