-- Shared pieces of the specs that run the real `luasched simulate` end to end
-- (LUASCHED_BIN): a scratch directory, writing and reading files, running the
-- binary and splitting its text output into per-pod outcome lines.
--
--   local sim = require("sim_helper")
--   local dir = sim.scratch()               -- a fresh empty directory
--   sim.write(dir .. "/cluster.yaml", text)
--   local r = sim.run({ "simulate", dir .. "/cluster.yaml" })
--   -- r.rc, r.out (stdout), r.err (stderr)
--   local lines = sim.outcomes(r.out)       -- ["default/p"] = "bound to n1"
--   sim.remove(dir)
local M = {}

--- The luasched executable, from LUASCHED_BIN (nil when unset).
M.BIN = os.getenv("LUASCHED_BIN")

--- LUASCHED_BIN, asserting that it is set.
function M.bin()
  assert(M.BIN and M.BIN ~= "", "LUASCHED_BIN must point to the luasched executable")
  return M.BIN
end

--- Runs a shell command; true when it exits with 0 (Lua 5.1 and 5.2+ returns).
function M.sh_ok(cmd)
  local r = os.execute(cmd)
  return r == 0 or r == true
end

--- `s` quoted for the shell (single quotes).
function M.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

--- Creates and returns a fresh scratch directory (os.tmpname's name), with
--- the given subdirectories (relative names) if any.
function M.scratch(...)
  local dir = os.tmpname()
  os.remove(dir)
  assert(M.sh_ok("mkdir -p " .. M.quote(dir)), "cannot create " .. dir)
  for _, sub in ipairs({ ... }) do
    assert(M.sh_ok("mkdir -p " .. M.quote(dir .. "/" .. sub)), "cannot create " .. dir .. "/" .. sub)
  end
  return dir
end

--- Removes a scratch directory (or file) and everything in it; nil is a no-op.
function M.remove(path)
  if path then return M.sh_ok("rm -rf " .. M.quote(path)) end
end

function M.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

function M.read(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("*a")
  f:close()
  return text
end

--- Runs LUASCHED_BIN with `args` (a list of strings, each quoted for the
--- shell). Returns { rc = exit code, out = stdout, err = stderr }.
--- opts.merge: stderr goes into out (2>&1) and err is "";
--- opts.err: the file stderr is written to (kept), else a temporary one.
function M.run(args, opts)
  opts = opts or {}
  local cmd = { M.quote(M.bin()) }
  for _, a in ipairs(args) do cmd[#cmd + 1] = M.quote(a) end
  local err_path
  if opts.merge then
    cmd[#cmd + 1] = "2>&1"
  else
    err_path = opts.err or os.tmpname()
    cmd[#cmd + 1] = "2>" .. M.quote(err_path)
  end
  local p = assert(io.popen(table.concat(cmd, " ") .. "; echo \"rc=$?\"", "r"))
  local out = p:read("*a")
  p:close()
  local rc
  out = out:gsub("rc=(%d+)\n$", function(c) rc = tonumber(c); return "" end)
  local err = ""
  if err_path then
    err = M.read(err_path)
    if not opts.err then os.remove(err_path) end
  end
  return { rc = rc, out = out, err = err }
end

--- The text output's pod lines: { ["ns/name"] = outcome } for every line
--- "ns/name: outcome". `pattern` (two captures: key, outcome) replaces the
--- default line pattern.
function M.outcomes(out, pattern)
  pattern = pattern or "^([^%s/:]+/[^:]+): (.*)$"
  local lines = {}
  for line in out:gmatch("[^\n]+") do
    local key, outcome = line:match(pattern)
    if key then lines[key] = outcome end
  end
  return lines
end

--- outcomes() of namespace `ns` only, keyed by pod name.
function M.pods(out, ns)
  local prefix = (ns or "default") .. "/"
  local pods = {}
  for key, outcome in pairs(M.outcomes(out)) do
    if key:sub(1, #prefix) == prefix then pods[key:sub(#prefix + 1)] = outcome end
  end
  return pods
end

return M
