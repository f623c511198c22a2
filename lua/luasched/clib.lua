-- luasched.clib: libluasched bound through the FFI. Runtime-internal: the
-- plugin sandbox does not let plugins require it (the C namespace would let a
-- plugin call anything in the process).
local ffi = require("ffi")
local cdefs = require("luasched.cdefs")

-- A reload (or a second state in the same process) must not redefine types.
-- The structs plugins read are declared with bounds-checked views in place of
-- their array pointers (luasched.views).
if not pcall(ffi.typeof, "ls_pod") then
  local views = require("luasched.views")
  local cdef = views.rewrite(cdefs.cdef)
  ffi.cdef(cdef)
  views.install()
  views.hide_addresses(cdef)
end

local function load_library()
  -- Inside the luasched executable the library is already in the global namespace.
  if pcall(function() return ffi.C.ls_abi_version end) then return ffi.C end
  return ffi.load(os.getenv("LUASCHED_LIB") or "luasched", true)
end

local C = load_library()
if C.ls_abi_version() ~= cdefs.abi then
  error(string.format("luasched: Lua runtime ABI %d does not match libluasched ABI %d",
    cdefs.abi, C.ls_abi_version()))
end
require("luasched.views").bind(C)
return C
