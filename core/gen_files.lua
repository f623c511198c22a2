-- The file helpers of the build's generators (gen_cdefs.lua, gen_docs.lua):
-- reading a whole file, and writing one only when its content changes, so that
-- an unchanged input does not rebuild what depends on the output (and a
-- committed generated file keeps its time).
local M = {}

function M.read(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("*a")
  f:close()
  return text
end

function M.write_if_changed(path, text)
  local f = io.open(path, "r")
  if f then
    local old = f:read("*a")
    f:close()
    if old == text then return end
  end
  os.execute("mkdir -p '" .. path:match("^(.*)/[^/]+$") .. "'")
  f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

return M
