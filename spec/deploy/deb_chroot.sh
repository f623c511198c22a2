#!/usr/bin/env bash
# The Debian package: CPack makes it from this build; it is installed with apt
# (which pulls its dependencies from the Debian archive) into a clean Debian 12
# tree made by debootstrap (deploy/base-image.sh's cached tarball), and the
# installed luasched runs there: `luasched version`, the demo cluster, and
# `luasched test` on the tutorial spec. Skipped (77) without root, debootstrap
# or cpack.
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/deploy_lib.bash"
need_release_build
need_root
need_tools debootstrap cpack chroot
ROOT=${LUASCHED_SOURCE_DIR:-.}
BUILD=$(dirname "$BIN")
start=$SECONDS

(cd "$TMP" && cpack -G DEB -B "$TMP/pkg" --config "$BUILD/CPackConfig.cmake" > "$TMP/cpack.log" 2>&1) \
  || { cat "$TMP/cpack.log"; echo "FAIL: cpack"; exit 1; }
deb=$(ls "$TMP"/pkg/luasched_*.deb)
echo "package: $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
expect_contains "package depends on the run-time libraries" "$(dpkg-deb -f "$deb" Depends)" "libluajit-5.1-2"

tarball=$("$ROOT/deploy/base-image.sh" --tarball-only) || { echo "FAIL: debootstrap base"; exit 1; }
CHROOT=$TMP/root
mkdir -p "$CHROOT"
tar -C "$CHROOT" -xf "$tarball"
cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
cp "$deb" "$CHROOT/tmp/luasched.deb"
mount -t proc proc "$CHROOT/proc"
on_exit 'umount "$CHROOT/proc" 2>/dev/null'
in_chroot() { chroot "$CHROOT" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

if ! in_chroot sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/luasched.deb' \
     > "$TMP/apt.log" 2>&1; then
  tail -20 "$TMP/apt.log"; echo "FAIL: apt-get install of the package in the chroot"; exit 1
fi
echo "installed in the chroot after $((SECONDS - start)) s"
expect_eq "nothing of the source tree in the chroot" "$(in_chroot sh -c "ls -d '$ROOT' 2>/dev/null")" ""
ver=$(in_chroot luasched version 2>&1)
expect_contains "version" "$ver" "luasched 0.1.0"
expect_contains "LuaJIT version" "$ver" "luajit: LuaJIT 2.1"
expect_contains "plugins found in the package's directory" "$ver" "plugins: /usr/share/luasched/plugins"
out=$(in_chroot luasched simulate /usr/share/luasched/examples/demo-cluster.yaml 2>&1)
expect_contains "the demo: web-0" "$out" "shop/web-0: bound to node-a1"
expect_contains "the demo: summary" "$out" "summary: 6 nodes, 9 pods: 5 bound, 1 unschedulable, 2 already running, 0 gated, 1 not ours"
out=$(in_chroot luasched test 2>&1)
expect_contains "luasched test without busted names the fix" "$out" "apt-get install lua-busted"
echo "deb test took $((SECONDS - start)) s"
[ "$failures" -eq 0 ]
