-- wrk script: POSTs the file $TS_BODY with the headers Claude Code sends
-- that the gateway reads.
local f = assert(io.open(os.getenv("TS_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["anthropic-version"] = "2023-06-01"
wrk.headers["anthropic-beta"] = "claude-code-20250219,context-1m-2025-08-07"
