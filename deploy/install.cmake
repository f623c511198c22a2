# install.cmake: what `cmake --install` lays out under a prefix, and the Debian
# package CPack makes of it (`cpack -G DEB` in the build directory).
#
#   PREFIX/bin/luasched                      the executable (RUNPATH $ORIGIN/../lib/luasched)
#   PREFIX/lib/luasched/libluasched.so       the core library
#   PREFIX/share/luasched/lua/               the Lua runtime, the plugin kit, the generated cdefs
#   PREFIX/share/luasched/plugins/           the bundled plugins
#   PREFIX/share/luasched/profiles/          example KubeSchedulerConfigurations
#   PREFIX/share/luasched/examples/          the demo cluster, example plugins and profiles
#   PREFIX/share/luasched/meta/              luasched-meta.lua: LuaLS annotations of the plugin API
#                                            (an editor's Lua.workspace.library)
#
# The library finds the share directory relative to itself (core/src/framework/paths.c),
# so the installed binary needs no environment variables wherever the prefix is.

set_target_properties(luasched_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${LS_INSTALL_LIB_DIR}")
install(TARGETS luasched_cli RUNTIME DESTINATION bin)
install(TARGETS luasched LIBRARY DESTINATION ${LS_INSTALL_LIB_DIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/lua/ DESTINATION ${LS_INSTALL_DATA_DIR}/lua FILES_MATCHING PATTERN "*.lua")
install(FILES ${LS_GEN_DIR}/luasched/cdefs.lua DESTINATION ${LS_INSTALL_DATA_DIR}/lua/luasched)
install(FILES ${LS_GEN_DIR}/meta/luasched-meta.lua DESTINATION ${LS_INSTALL_DATA_DIR}/meta)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/plugins/ DESTINATION ${LS_INSTALL_DATA_DIR}/plugins FILES_MATCHING PATTERN "*.lua")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/profiles/ DESTINATION ${LS_INSTALL_DATA_DIR}/profiles)
install(FILES ${CMAKE_SOURCE_DIR}/examples/demo-cluster.yaml ${CMAKE_SOURCE_DIR}/examples/prefer-labeled-profile.yaml
        DESTINATION ${LS_INSTALL_DATA_DIR}/examples)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/plugins/ DESTINATION ${LS_INSTALL_DATA_DIR}/examples/plugins)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME luasched)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "luasched maintainers <luasched@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Kubernetes pod scheduler with Lua (LuaJIT) plugins")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# Runtime libraries of Debian 12 (dpkg-shlibdeps would need the -dev packages' symbols
# files; these are the sonames the binary links, checked by spec/package/deb_chroot.sh).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libluajit-5.1-2, libcjson1, libyaml-0-2, libcurl4, libmicrohttpd12, libgnutls30, libssl3, libseccomp2")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "lua-busted")
include(CPack)
