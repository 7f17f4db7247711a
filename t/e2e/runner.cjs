// The Anthropic TypeScript SDK's own tool runner, for make e2e.
//
//   NODE_PATH=build/e2e/node_modules node t/e2e/runner.cjs CONFIG.json
//
// CONFIG: as for agent.cjs ({"baseURL", "model", "stream", "prompt",
//          "maxTurns", "catalogue", "memory"}).
//
// client.beta.messages.toolRunner() runs on a message thread by default
// (SDK 1.14.0): the first request sends the tools with
// "thread":{"type":"create"}, each later one only the new message with
// "thread":{"type":"continue",...}.  The memory server's tools are
// runnable tools named mcp__memory__<name>; the catalogue's others are
// definitions the runner answers as not found.  It prints one JSON report
// on stdout, as agent.cjs does.

"use strict";

const fs = require("fs");
const Anthropic = require("@anthropic-ai/sdk");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } =
    require("@modelcontextprotocol/sdk/client/stdio.js");

const PREFIX = "mcp__memory__";

function runnable(mcp, t) {
    return {
        type: "custom", name: PREFIX + t.name, description: t.description,
        input_schema: t.inputSchema,
        parse: (input) => input,
        run: async (input) => {
            const r = await mcp.callTool({ name: t.name, arguments: input });
            return r.content.filter((c) => c.type === "text")
                .map((c) => c.text).join("\n");
        },
    };
}

async function main() {
    const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    const mcp = new Client({ name: "toolsearch-e2e-runner",
                             version: "1.0.0" });
    await mcp.connect(new StdioClientTransport(config.memory));
    const report = { turns: [], final: null, stop_reason: null };
    try {
        const listed = (await mcp.listTools()).tools;
        const catalogue = JSON.parse(fs.readFileSync(config.catalogue, "utf8"))
            .tools.filter((t) => !t.name.startsWith(PREFIX));
        const tools = listed.map((t) => runnable(mcp, t)).concat(catalogue);
        report.tools = tools.length;

        const client = new Anthropic({
            baseURL: config.baseURL, apiKey: "sk-e2e", maxRetries: 0,
            timeout: 60 * 1000,
        });
        const runner = client.beta.messages.toolRunner({
            model: config.model, max_tokens: 1024, tools,
            messages: [{ role: "user", content: config.prompt }],
            max_iterations: config.maxTurns, stream: config.stream,
        });
        for await (const item of runner) {
            const message = config.stream ? await item.finalMessage() : item;
            report.turns.push({
                id: message.id,
                stop_reason: message.stop_reason,
                content: message.content,
                usage: message.usage,
            });
            report.stop_reason = message.stop_reason;
        }
        const last = report.turns[report.turns.length - 1];
        report.final = last.content.filter((b) => b.type === "text")
            .map((b) => b.text).join("");
    } finally {
        await mcp.close();
    }
    process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((e) => {
    process.stderr.write(String(e && e.stack || e) + "\n");
    process.exit(1);
});
