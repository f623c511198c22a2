# Every test runs through ctest: C unit tests (spec/core/<folder>/test_*.c, after core/src/<folder>), busted specs
# under LuaJIT (spec/lua/*_spec.lua, loading libluasched through the FFI), and
# end-to-end runs of the luasched executable (spec/e2e/*.sh).

file(GLOB_RECURSE LS_C_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/core/test_*.c)
foreach(src ${LS_C_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/core/src ${CMAKE_SOURCE_DIR}/spec/core)
  target_compile_definitions(${name} PRIVATE LS_SPEC_DIR="${CMAKE_SOURCE_DIR}/spec" LS_GEN_DIR="${LS_GEN_DIR}")
  target_link_libraries(${name} PRIVATE luasched)
  add_test(NAME c/${name} COMMAND ${name})
endforeach()

set(LS_TEST_ENV
  "LUASCHED_LIB=$<TARGET_FILE:luasched>"
  "LUASCHED_BIN=$<TARGET_FILE:luasched_cli>"
  "LUASCHED_TEST_EXTENDER=$<TARGET_FILE:luasched_test_extender>"
  "LUASCHED_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
  "LUA_PATH=${CMAKE_SOURCE_DIR}/lua/?.lua\\;${CMAKE_SOURCE_DIR}/spec/lua/?.lua\\;${LS_GEN_DIR}/?.lua\\;/usr/share/lua/5.1/?.lua\\;/usr/share/lua/5.1/?/init.lua")
set(LS_SPEC_ENV "${LS_TEST_ENV}")
if(LS_SANITIZE)
  # The luajit interpreter running busted is not built with ASan: preload the
  # runtime so the FFI-loaded library's instrumentation has it. Leak checks stay
  # off in that process only (busted and LuaJIT keep memory until exit); the C
  # tests and the luasched runs keep them on.
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so OUTPUT_VARIABLE LS_ASAN_LIB OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND LS_SPEC_ENV "LD_PRELOAD=${LS_ASAN_LIB}" "ASAN_OPTIONS=detect_leaks=0")
endif()

find_program(BUSTED_EXE busted)
file(GLOB LS_LUA_SPECS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/lua/*_spec.lua)
foreach(spec ${LS_LUA_SPECS})
  get_filename_component(name ${spec} NAME_WE)
  add_test(NAME lua/${name} COMMAND ${LUAJIT_EXE} ${BUSTED_EXE} --helper=${CMAKE_SOURCE_DIR}/spec/lua/helper.lua ${spec}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(lua/${name} PROPERTIES ENVIRONMENT "${LS_SPEC_ENV}")
endforeach()

# The red-team suite of the plugin boundary (spec/security/): busted specs too.
file(GLOB LS_SECURITY_SPECS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/security/*_spec.lua)
foreach(spec ${LS_SECURITY_SPECS})
  get_filename_component(name ${spec} NAME_WE)
  add_test(NAME security/${name} COMMAND ${LUAJIT_EXE} ${BUSTED_EXE} --helper=${CMAKE_SOURCE_DIR}/spec/lua/helper.lua ${spec}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(security/${name} PROPERTIES ENVIRONMENT "${LS_SPEC_ENV}")
endforeach()

file(GLOB LS_E2E_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/e2e/*.sh)
foreach(script ${LS_E2E_TESTS})
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME e2e/${name} COMMAND bash ${script} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set(env "${LS_TEST_ENV}")
  if(LS_SANITIZE)
    list(APPEND env "LUASCHED_SANITIZED=1")
  endif()
  set_tests_properties(e2e/${name} PROPERTIES ENVIRONMENT "${env}" SKIP_RETURN_CODE 77)
endforeach()

# Lua style: luacheck over the runtime, the plugins and the specs (no globals).
# Without luacheck the test is still there and fails, naming the package.
find_program(LUACHECK_EXE luacheck)
if(LUACHECK_EXE)
  add_test(NAME lint/luacheck COMMAND ${LUACHECK_EXE} --no-color --std luajit plugins lua spec/lua spec/security spec/fuzz/plugin_gen.lua
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
else()
  add_test(NAME lint/luacheck COMMAND sh -c "echo 'luacheck is not installed (Debian package lua-check; .ci/deps.sh installs it)'; exit 1")
endif()

# The scheduler extender the extender specs talk to (spec/extender/).
add_executable(luasched_test_extender ${CMAKE_SOURCE_DIR}/spec/extender/test_extender.c)
target_include_directories(luasched_test_extender PRIVATE ${CMAKE_SOURCE_DIR}/core/src)

target_link_libraries(luasched_test_extender PRIVATE luasched PkgConfig::GNUTLS)

# Deployment: the container image, the .deb in a clean chroot, the manifests
# (spec/deploy/*.sh). A missing tool or root reports the test skipped (77).
file(GLOB LS_DEPLOY_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/deploy/*.sh)
foreach(script ${LS_DEPLOY_TESTS})
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME deploy/${name} COMMAND bash ${script} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set(env "${LS_TEST_ENV}")
  if(LS_SANITIZE)
    list(APPEND env "LUASCHED_SANITIZED=1")
  endif()
  set_tests_properties(deploy/${name} PROPERTIES ENVIRONMENT "${env}" SKIP_RETURN_CODE 77 TIMEOUT 900)
endforeach()

# Random plugin code through real scheduling cycles (spec/fuzz/README.md): a
# short run here; the long run is `build/fuzz_plugins -n 1000000`.
add_executable(fuzz_plugins ${CMAKE_SOURCE_DIR}/spec/fuzz/fuzz_plugins.c)
target_include_directories(fuzz_plugins PRIVATE ${CMAKE_SOURCE_DIR}/core/src)
target_compile_definitions(fuzz_plugins PRIVATE LS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_link_libraries(fuzz_plugins PRIVATE luasched)
add_test(NAME fuzz/plugin_api COMMAND fuzz_plugins -n 3000 -p 100)

# Documentation: the plugin API reference is current and complete (core/gen_docs.lua
# fails on a public name, view field or hook without a doc comment, and when
# docs/plugins/api.md differs from what it generates now), and every command block
# marked <!-- runnable --> in docs/ still runs (spec/docs/runnable.sh).
add_test(NAME docs/api_reference COMMAND ${LUAJIT_EXE} ${CMAKE_SOURCE_DIR}/core/gen_docs.lua ${CMAKE_SOURCE_DIR} --check
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(docs/api_reference PROPERTIES TIMEOUT 60)
add_test(NAME docs/runnable COMMAND bash ${CMAKE_SOURCE_DIR}/spec/docs/runnable.sh ${CMAKE_BINARY_DIR}
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(docs/runnable PROPERTIES TIMEOUT 600 ENVIRONMENT "${LS_TEST_ENV}")
