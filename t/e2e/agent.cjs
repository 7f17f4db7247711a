// A small agent on the Anthropic TypeScript SDK, for make e2e.
//
//   NODE_PATH=build/e2e/node_modules node t/e2e/agent.cjs CONFIG.json
//
// CONFIG: {"baseURL", "model", "stream", "prompt", "maxTurns",
//          "runner": true for the SDK's own tool runner,
//          "catalogue": a JSON file whose "tools" are the other tools,
//          "memory": {"command", "args", "env"}: the MCP memory server}
//
// It connects to the memory server over stdio and offers its tools as
// mcp__memory__<name> next to the catalogue's other tools.  By default it
// loops itself: messages.create (or messages.stream(...).finalMessage()),
// the assistant message carried back whole (server_tool_use and
// tool_search_tool_result blocks included), memory tools run on the
// server, until the model stops calling tools.  With "runner" the SDK's
// client.beta.messages.toolRunner() runs the loop, on a message thread by
// default (SDK 1.14.0): the first request sends the tools with
// "thread":{"type":"create"}, each later one only the new message with
// "thread":{"type":"continue",...}; the catalogue's tools are definitions
// it answers as not found.  It prints one JSON report on stdout.

"use strict";

const fs = require("fs");
const Anthropic = require("@anthropic-ai/sdk");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");

const PREFIX = "mcp__memory__";

async function main() {
    const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    const mcp = new Client({ name: "toolsearch-e2e-agent", version: "1.0.0" });
    await mcp.connect(new StdioClientTransport(config.memory));
    const report = { turns: [], final: null, stop_reason: null };
    try {
        const listed = (await mcp.listTools()).tools;
        const catalogue = JSON.parse(fs.readFileSync(config.catalogue, "utf8"))
            .tools.filter((t) => !t.name.startsWith(PREFIX));
        const client = new Anthropic({
            baseURL: config.baseURL, apiKey: "sk-e2e", maxRetries: 0,
            timeout: 60 * 1000,
        });
        const run = config.runner ? toolRunner : loop;
        await run(client, config, mcp, listed, catalogue, report);
        const last = report.turns[report.turns.length - 1];
        report.final = last.content.filter((b) => b.type === "text")
            .map((b) => b.text).join("");
    } finally {
        await mcp.close();
    }
    process.stdout.write(JSON.stringify(report) + "\n");
}

function record(report, message) {
    report.turns.push({
        id: message.id,
        stop_reason: message.stop_reason,
        content: message.content,
        usage: message.usage,
    });
    report.stop_reason = message.stop_reason;
}

async function loop(client, config, mcp, listed, catalogue, report) {
    const tools = listed.map((t) => ({
        name: PREFIX + t.name, description: t.description,
        input_schema: t.inputSchema,
    })).concat(catalogue);
    report.tools = tools.length;
    const messages = [{ role: "user", content: config.prompt }];
    for (let turn = 0; turn < config.maxTurns; turn++) {
        const params = {
            model: config.model, max_tokens: 1024, tools, messages,
        };
        const message = config.stream
            ? await client.messages.stream(params).finalMessage()
            : await client.messages.create(params);
        record(report, message);
        messages.push({ role: "assistant", content: message.content });
        if (message.stop_reason === "pause_turn") continue;
        if (message.stop_reason !== "tool_use") break;
        const results = [];
        for (const block of message.content) {
            if (block.type !== "tool_use") continue;
            results.push(await runTool(mcp, block));
        }
        messages.push({ role: "user", content: results });
    }
}

async function toolRunner(client, config, mcp, listed, catalogue, report) {
    const tools = listed.map((t) => ({
        type: "custom", name: PREFIX + t.name, description: t.description,
        input_schema: t.inputSchema,
        parse: (input) => input,
        run: async (input) => (await callTool(mcp, t.name, input)).text,
    })).concat(catalogue);
    report.tools = tools.length;
    const runner = client.beta.messages.toolRunner({
        model: config.model, max_tokens: 1024, tools,
        messages: [{ role: "user", content: config.prompt }],
        max_iterations: config.maxTurns, stream: config.stream,
    });
    for await (const item of runner) {
        record(report, config.stream ? await item.finalMessage() : item);
    }
}

async function callTool(mcp, name, input) {
    const r = await mcp.callTool({ name, arguments: input });
    return {
        text: r.content.filter((c) => c.type === "text")
            .map((c) => c.text).join("\n"),
        isError: Boolean(r.isError),
    };
}

async function runTool(mcp, block) {
    if (!block.name.startsWith(PREFIX)) {
        return { type: "tool_result", tool_use_id: block.id, is_error: true,
                 content: "This agent does not run " + block.name + "." };
    }
    const r = await callTool(mcp, block.name.slice(PREFIX.length),
                             block.input);
    return { type: "tool_result", tool_use_id: block.id,
             is_error: r.isError, content: r.text };
}

main().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + "\n");
    process.exit(1);
});
