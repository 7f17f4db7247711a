// The Claude Agent SDK (Claude Code inside) as an agent.
//
//   node t/e2e/sdk/agentsdk.mjs CONFIG.json
//
// CONFIG as for aisdk.mjs.  Tools are named mcp__SERVER__TOOL.  Prints
// {"final": TEXT} on stdout.

import fs from "node:fs";
import { query } from "@anthropic-ai/claude-agent-sdk";

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const servers = {};
for (const [name, s] of Object.entries(config.servers)) {
    servers[name] = { type: "stdio", ...s };
}
let final = null;
for await (const m of query({ prompt: config.prompt, options: {
        mcpServers: servers, permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true, model: config.model,
        maxTurns: 6,
        env: { ...process.env, ANTHROPIC_BASE_URL: config.url,
               ANTHROPIC_API_KEY: "sk-ant-test" } } })) {
    if (m.type === "result") {
        final = m.result;
    }
}
console.log(JSON.stringify({ final }));
