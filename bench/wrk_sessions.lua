-- wrk script: POSTs the bodies listed in the file $TS_BODIES (one path a
-- line), each in turn, with the headers Claude Code sends that the
-- gateway reads.  The requests are formatted once, when the thread starts.
local requests = {}
local next_one = 0

function init(args)
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/json"
   wrk.headers["anthropic-version"] = "2023-06-01"
   wrk.headers["anthropic-beta"] =
      "claude-code-20250219,context-1m-2025-08-07"
   for path in io.lines(os.getenv("TS_BODIES")) do
      local f = assert(io.open(path, "rb"))
      requests[#requests + 1] = wrk.format(nil, nil, nil, f:read("*a"))
      f:close()
   end
end

function request()
   next_one = next_one % #requests + 1
   return requests[next_one]
end
