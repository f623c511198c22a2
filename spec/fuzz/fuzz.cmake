# libFuzzer targets for the parsers (issue 8). Included from CMakeLists.txt
# only when LS_FUZZ is ON; needs clang (Debian: clang-14 + libclang-rt-14-dev):
#
#   CC=clang cmake -S . -B build-fuzz -DLS_FUZZ=ON
#   cmake --build build-fuzz --target ls_fuzz
#   spec/fuzz/run.sh [SECONDS_PER_TARGET]      # builds the above if needed
#
# Each target is spec/fuzz/fuzz_<name>.c. They link a static library of just
# the parser sources (no LuaJIT, no shared libluasched), instrumented with
# -fsanitize=fuzzer-no-link,address,undefined; cJSON and libyaml are the
# system's (not instrumented).

if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "LS_FUZZ needs clang (libFuzzer): CC=clang cmake -S . -B build-fuzz -DLS_FUZZ=ON")
endif()

set(LS_FUZZ_DIR ${CMAKE_SOURCE_DIR}/spec/fuzz)
set(LS_FUZZ_SANITIZE address,undefined)
set(LS_FUZZ_FLAGS -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined)

# The sources the parsers need, listed rather than globbed so that a module in
# progress elsewhere in core/src cannot break this build (config/ is globbed:
# the loader is split over several files there). base.c comes in
# through exact_arena.c, which gives every arena allocation its own heap block
# so that AddressSanitizer sees overruns between objects of one arena. The
# config loader is a library of its own, so the model targets build even while
# config.c is being changed.
add_library(ls_fuzz_model STATIC
  ${LS_FUZZ_DIR}/exact_arena.c
  ${CMAKE_SOURCE_DIR}/core/src/model/decode.c
  ${CMAKE_SOURCE_DIR}/core/src/model/decode_access.c
  ${CMAKE_SOURCE_DIR}/core/src/model/decode_containers.c
  ${CMAKE_SOURCE_DIR}/core/src/model/decode_pod_extra.c
  ${CMAKE_SOURCE_DIR}/core/src/model/doc.c
  ${CMAKE_SOURCE_DIR}/core/src/model/doc_json.c
  ${CMAKE_SOURCE_DIR}/core/src/model/doc_yaml.c
  ${CMAKE_SOURCE_DIR}/core/src/model/labels.c
  ${CMAKE_SOURCE_DIR}/core/src/base/buf.c
  ${CMAKE_SOURCE_DIR}/core/src/base/map.c
  ${CMAKE_SOURCE_DIR}/core/src/model/objects.c
  ${CMAKE_SOURCE_DIR}/core/src/model/parse_text.c
  ${CMAKE_SOURCE_DIR}/core/src/model/pod_resources.c
  ${CMAKE_SOURCE_DIR}/core/src/model/quantity.c
  ${CMAKE_SOURCE_DIR}/core/src/model/resources.c
  ${CMAKE_SOURCE_DIR}/core/src/config/feature_gates.c   # the decoder reads gates (PodLevelResources, ...)
  ${CMAKE_SOURCE_DIR}/core/src/base/log.c)
target_link_libraries(ls_fuzz_model PUBLIC PkgConfig::CJSON PkgConfig::YAML m)
file(GLOB LS_FUZZ_CONFIG_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/core/src/config/*.c)
list(FILTER LS_FUZZ_CONFIG_SOURCES EXCLUDE REGEX "feature_gates\\.c$")   # in ls_fuzz_model
add_library(ls_fuzz_config STATIC
  ${LS_FUZZ_CONFIG_SOURCES}
  ${CMAKE_SOURCE_DIR}/core/src/framework/extension_points.c
  ${CMAKE_SOURCE_DIR}/core/src/base/suggest.c   # "did you mean" of unknown fields
  ${CMAKE_SOURCE_DIR}/core/src/client/kutil.c)
target_link_libraries(ls_fuzz_config PUBLIC ls_fuzz_model)
# The watch-stream decoder needs nothing but cJSON and the error/alloc helpers
# of base.c (through exact_arena.c, as for the model).
add_library(ls_fuzz_watch STATIC
  ${LS_FUZZ_DIR}/exact_arena.c
  ${CMAKE_SOURCE_DIR}/core/src/client/watch.c)
target_link_libraries(ls_fuzz_watch PUBLIC PkgConfig::CJSON m)
# kubeconfig parsing: the loader and its file/base64 helpers; model/doc.c
# (and base.c, through exact_arena.c) come from ls_fuzz_model.
add_library(ls_fuzz_kubeconfig STATIC
  ${CMAKE_SOURCE_DIR}/core/src/client/kubeconfig.c
  ${CMAKE_SOURCE_DIR}/core/src/client/exec_cred.c
  ${CMAKE_SOURCE_DIR}/core/src/client/kutil.c)
target_link_libraries(ls_fuzz_kubeconfig PUBLIC ls_fuzz_model PkgConfig::CRYPTO Threads::Threads)
# The served Kubernetes API: the store (sim/api_*.c, with the PV controller it
# runs after writes, sim/pv_controller.c), its HTTP front end
# (apiserver.c) and the libmicrohttpd wrapper it answers through (requests are
# built without a connection, but the wrapper's symbols are linked); not
# tls.c. libcrypto for CRYPTO_memcmp (the token check); api_load.c reads
# cluster files through model/doc.c, from ls_fuzz_model.
add_library(ls_fuzz_api STATIC
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_admission.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_auth.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_bind.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_custom.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_events.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_list.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_load.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_patch.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_record.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_resources.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_select.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_store.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_table.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_validate.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_watch.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/api_volumes.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/pv_controller.c
  ${CMAKE_SOURCE_DIR}/core/src/sim/apiserver.c
  ${CMAKE_SOURCE_DIR}/core/src/server/http.c)
target_link_libraries(ls_fuzz_api PUBLIC ls_fuzz_model PkgConfig::MHD PkgConfig::CRYPTO Threads::Threads)
foreach(lib ls_fuzz_model ls_fuzz_config ls_fuzz_watch ls_fuzz_kubeconfig ls_fuzz_api)
  target_include_directories(${lib} PUBLIC ${CMAKE_SOURCE_DIR}/core/include ${CMAKE_SOURCE_DIR}/core/src)
  add_dependencies(${lib} ls_cdefs)
  target_compile_options(${lib} PRIVATE ${LS_FUZZ_FLAGS} -fsanitize=fuzzer-no-link,${LS_FUZZ_SANITIZE})
endforeach()

set(LS_FUZZ_TARGETS quantity doc pod node object selector config watch api kubeconfig)
foreach(name ${LS_FUZZ_TARGETS})
  add_executable(fuzz_${name} ${LS_FUZZ_DIR}/fuzz_${name}.c)
  target_include_directories(fuzz_${name} PRIVATE ${LS_FUZZ_DIR})
  target_compile_options(fuzz_${name} PRIVATE ${LS_FUZZ_FLAGS} -fsanitize=fuzzer,${LS_FUZZ_SANITIZE})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer,${LS_FUZZ_SANITIZE})
  if(name STREQUAL "config")
    target_link_libraries(fuzz_${name} PRIVATE ls_fuzz_config)
  elseif(name STREQUAL "watch")
    target_link_libraries(fuzz_${name} PRIVATE ls_fuzz_watch)
  elseif(name STREQUAL "api")
    target_link_libraries(fuzz_${name} PRIVATE ls_fuzz_api)
  elseif(name STREQUAL "kubeconfig")
    target_link_libraries(fuzz_${name} PRIVATE ls_fuzz_kubeconfig)
  else()
    target_link_libraries(fuzz_${name} PRIVATE ls_fuzz_model)
  endif()
  list(APPEND LS_FUZZ_EXECUTABLES fuzz_${name})
endforeach()
add_custom_target(ls_fuzz DEPENDS ${LS_FUZZ_EXECUTABLES})
