# bench/: the Lua-versus-C pair (never used by the scheduler). luasched_lua_vs_c
# times NodeResourcesFit's Filter and LeastAllocated Score written in C
# (fit_in_c.c) against the real Lua plugin run through the Lua runtime.
add_executable(luasched_lua_vs_c ${CMAKE_SOURCE_DIR}/bench/lua_vs_c.c ${CMAKE_SOURCE_DIR}/bench/fit_in_c.c)
target_include_directories(luasched_lua_vs_c PRIVATE ${CMAKE_SOURCE_DIR}/core/src ${CMAKE_SOURCE_DIR}/bench)
target_link_libraries(luasched_lua_vs_c PRIVATE luasched)

# The end-to-end smoke test runs it with tiny sizes.
if(TEST e2e/bench_smoke)
  set_property(TEST e2e/bench_smoke APPEND PROPERTY ENVIRONMENT "LUASCHED_LUA_VS_C=$<TARGET_FILE:luasched_lua_vs_c>")
endif()


# bench/whatif.sh's question client (libcurl's multi interface, one thread).
add_executable(luasched_whatif_client ${CMAKE_SOURCE_DIR}/bench/whatif_client.c)
target_link_libraries(luasched_whatif_client PRIVATE PkgConfig::CURL)
