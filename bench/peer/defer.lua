-- The deferral of ngx_http_toolsearch_module written the way a Lua
-- gateway plugin (Kong, APISIX) writes a body transform: read the body
-- with the lua-nginx-module API, decode it with cjson, mark every MCP
-- tool defer_loading, add the hosted search tool and its beta, encode,
-- replace the body.  It is the benchmark's peer, run in the access phase
-- (where such plugins run) with the same client_body_buffer_size.

local cjson = require "cjson.safe"

local BETA = "advanced-tool-use-2025-11-20"
local SEARCH_TOOL = { type = "tool_search_tool_bm25_20251119",
                      name = "tool_search_tool_bm25" }

local function body()
    ngx.req.read_body()
    local data = ngx.req.get_body_data()
    if data then
        return data
    end
    local path = ngx.req.get_body_file()
    if not path then
        return nil
    end
    local f = io.open(path, "rb")
    if not f then
        return nil
    end
    data = f:read("*a")
    f:close()
    return data
end

local data = body()
local doc = data and cjson.decode(data)
if type(doc) ~= "table" or type(doc.tools) ~= "table" then
    return
end

local deferred = 0
for _, tool in ipairs(doc.tools) do
    if type(tool.name) == "string" and tool.name:sub(1, 5) == "mcp__" then
        tool.defer_loading = true
        deferred = deferred + 1
    end
end

if deferred == 0 then
    return
end

doc.tools[#doc.tools + 1] = SEARCH_TOOL
ngx.req.set_body_data(cjson.encode(doc))

local beta = ngx.req.get_headers()["anthropic-beta"]
if type(beta) == "table" then
    beta = table.concat(beta, ",")
end
ngx.req.set_header("anthropic-beta", beta and beta .. "," .. BETA or BETA)
