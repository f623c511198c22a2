# Every test runs through ctest: C unit tests (spec/core/<folder>/test_*.c, after core/src/<folder>), busted specs
# under LuaJIT (spec/lua/*_spec.lua, loading libluasched through the FFI), and
# end-to-end runs of the luasched executable (spec/e2e/*.sh).
#
# Every test is registered through ls_add_test(NAME KIND ...), which gives it
# the time limit and labels of its kind (docs/development/testing.md), so a
# new test gets them without a line of its own:
#   kind    labels          ctest TIMEOUT (s)  script's own limit (LS_TIME_LIMIT)
#   c       quick           120
#   lua     quick or spec   300
#   security security       600
#   e2e     e2e             360                 300 (spec/e2e/lib.bash)
#   deploy  deploy          960                 900
#   fuzz    fuzz            600
#   lint    lint quick      120
# The limits are generous: a loaded machine is slow, not failing; a test
# that hangs is stopped, and its processes with it (lib.bash).
# `quick` (ctest -L quick): the C tests, the lint and the specs that take
# seconds, under 2 minutes on 2 cores. LS_SLOW_SPECS lists the busted specs
# left out of it (they run many simulations; label `spec`).
set(LS_SLOW_SPECS
  scenarios_spec)

function(ls_add_test name kind)
  # ENV names a list variable (its LUA_PATH carries escaped semicolons: passed by name, not expanded)
  cmake_parse_arguments(T "" "WORKING_DIRECTORY;ENV" "COMMAND" ${ARGN})
  set(limit 0)
  if(kind STREQUAL "c")
    set(labels quick)
    set(timeout 120)
  elseif(kind STREQUAL "lua")
    get_filename_component(base ${name} NAME)
    if(base IN_LIST LS_SLOW_SPECS)
      set(labels spec)
    else()
      set(labels spec quick)
    endif()
    set(timeout 300)
  elseif(kind STREQUAL "security")
    set(labels security)
    set(timeout 600)
  elseif(kind STREQUAL "e2e")
    set(labels e2e)
    set(limit 300)
  elseif(kind STREQUAL "deploy")
    set(labels deploy)
    set(limit 900)
  elseif(kind STREQUAL "fuzz")
    set(labels fuzz)
    set(timeout 600)
  elseif(kind STREQUAL "lint")
    set(labels lint quick)
    set(timeout 120)
  else()
    message(FATAL_ERROR "ls_add_test(${name}): unknown kind ${kind}")
  endif()
  set(test_env "")
  if(T_ENV)
    set(test_env "${${T_ENV}}")
  endif()
  if(limit)
    math(EXPR timeout "${limit} + 60")   # the script stops itself (and what it started) first
    list(APPEND test_env "LS_TIME_LIMIT=${limit}")
  endif()
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND} WORKING_DIRECTORY ${T_WORKING_DIRECTORY})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} LABELS "${labels}" SKIP_RETURN_CODE 77)
  if(test_env)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${test_env}")
  endif()
endfunction()

file(GLOB_RECURSE LS_C_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/core/test_*.c)
foreach(src ${LS_C_TESTS})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/core/src ${CMAKE_SOURCE_DIR}/spec/core)
  target_compile_definitions(${name} PRIVATE LS_SPEC_DIR="${CMAKE_SOURCE_DIR}/spec" LS_GEN_DIR="${LS_GEN_DIR}")
  target_link_libraries(${name} PRIVATE luasched)
  ls_add_test(c/${name} c COMMAND ${name})
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
  list(APPEND LS_SPEC_ENV "LUASCHED_SANITIZED=1")   # specs loosen what ASan itself costs (peak RSS)
endif()

find_program(BUSTED_EXE busted)
file(GLOB LS_LUA_SPECS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/lua/*_spec.lua)
foreach(spec ${LS_LUA_SPECS})
  get_filename_component(name ${spec} NAME_WE)
  ls_add_test(lua/${name} lua COMMAND ${LUAJIT_EXE} ${BUSTED_EXE} --helper=${CMAKE_SOURCE_DIR}/spec/lua/helper.lua ${spec}
              ENV LS_SPEC_ENV)
endforeach()

# The red-team suite of the plugin boundary (spec/security/): busted specs too.
file(GLOB LS_SECURITY_SPECS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/security/*_spec.lua)
foreach(spec ${LS_SECURITY_SPECS})
  get_filename_component(name ${spec} NAME_WE)
  ls_add_test(security/${name} security COMMAND ${LUAJIT_EXE} ${BUSTED_EXE}
              --helper=${CMAKE_SOURCE_DIR}/spec/lua/helper.lua ${spec} ENV LS_SPEC_ENV)
endforeach()
# ... and end-to-end scripts of the red team (spec/security/*.sh, on spec/e2e/lib.bash).
file(GLOB LS_SECURITY_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/security/*.sh)
foreach(script ${LS_SECURITY_SCRIPTS})
  get_filename_component(name ${script} NAME_WE)
  set(env "${LS_TEST_ENV}")
  if(LS_SANITIZE)
    list(APPEND env "LUASCHED_SANITIZED=1")
  endif()
  ls_add_test(security/${name} security COMMAND bash ${script} ENV env)
endforeach()

file(GLOB LS_E2E_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/e2e/*.sh)
foreach(script ${LS_E2E_TESTS})
  get_filename_component(name ${script} NAME_WE)
  set(env "${LS_TEST_ENV}")
  if(LS_SANITIZE)
    list(APPEND env "LUASCHED_SANITIZED=1")
  endif()
  ls_add_test(e2e/${name} e2e COMMAND bash ${script} ENV env)
endforeach()

# Lua style: luacheck over the runtime, the plugins and the specs (no globals).
# Without luacheck the test is still there and fails, naming the package.
find_program(LUACHECK_EXE luacheck)
if(LUACHECK_EXE)
  ls_add_test(lint/luacheck lint COMMAND ${LUACHECK_EXE} --no-color --std luajit plugins lua spec/lua spec/security
              spec/fuzz/plugin_gen.lua)
else()
  ls_add_test(lint/luacheck lint COMMAND sh -c "echo 'luacheck is not installed (Debian package lua-check; .ci/deps.sh installs it)'; exit 1")
endif()

# The e2e and deploy scripts leave their clean-up to lib.bash (spec/lint/e2e_cleanup.sh).
ls_add_test(lint/e2e_cleanup lint COMMAND bash ${CMAKE_SOURCE_DIR}/spec/lint/e2e_cleanup.sh)

# No include circle in core/src/scheduler/, its lifetime header kept inside (spec/lint/include_graph.sh).
ls_add_test(lint/include_graph lint COMMAND bash ${CMAKE_SOURCE_DIR}/spec/lint/include_graph.sh ${CMAKE_SOURCE_DIR})

# The scheduler extender the extender specs talk to (spec/extender/).
add_executable(luasched_test_extender ${CMAKE_SOURCE_DIR}/spec/extender/test_extender.c)
target_include_directories(luasched_test_extender PRIVATE ${CMAKE_SOURCE_DIR}/core/src)

target_link_libraries(luasched_test_extender PRIVATE luasched PkgConfig::GNUTLS)

# Deployment: the container image, the .deb in a clean chroot, the manifests
# (spec/deploy/*.sh). A missing tool or root reports the test skipped (77).
file(GLOB LS_DEPLOY_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/spec/deploy/*.sh)
foreach(script ${LS_DEPLOY_TESTS})
  get_filename_component(name ${script} NAME_WE)
  set(env "${LS_TEST_ENV}")
  if(LS_SANITIZE)
    list(APPEND env "LUASCHED_SANITIZED=1")
  endif()
  ls_add_test(deploy/${name} deploy COMMAND bash ${script} ENV env)
endforeach()

# deb_chroot's cpack builds what is out of date in this build tree first (its
# preinstall step: after a commit, ls_version relinks the executable), which
# must not happen under the feet of the tests running it: it runs alone. (In a
# suite run after a commit, 29 scenarios failed while luasched was relinked.)
set_tests_properties(deploy/deb_chroot PROPERTIES RUN_SERIAL TRUE)

# Random plugin code through real scheduling cycles (spec/fuzz/README.md): a
# short run here; the long run is `build/fuzz_plugins -n 1000000`.
add_executable(fuzz_plugins ${CMAKE_SOURCE_DIR}/spec/fuzz/fuzz_plugins.c)
target_include_directories(fuzz_plugins PRIVATE ${CMAKE_SOURCE_DIR}/core/src)
target_compile_definitions(fuzz_plugins PRIVATE LS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_link_libraries(fuzz_plugins PRIVATE luasched)
ls_add_test(fuzz/plugin_api fuzz COMMAND fuzz_plugins -n 3000 -p 100)

# Documentation: the plugin API reference is current and complete (core/gen_docs.lua
# fails on a public name, view field or hook without a doc comment, and when
# docs/plugins/api.md differs from what it generates now), and every command block
# marked <!-- runnable --> in docs/ still runs (spec/docs/runnable.sh).
ls_add_test(docs/api_reference lint COMMAND ${LUAJIT_EXE} ${CMAKE_SOURCE_DIR}/core/gen_docs.lua ${CMAKE_SOURCE_DIR} --check)
set(docs_env "${LS_TEST_ENV}")
ls_add_test(docs/runnable e2e COMMAND bash ${CMAKE_SOURCE_DIR}/spec/docs/runnable.sh ${CMAKE_BINARY_DIR} ENV docs_env)
