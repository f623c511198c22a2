#!/usr/bin/env bash
# The container image (deploy/Containerfile) built with buildah from a Debian 12
# base made by debootstrap (no registry), then run: `luasched version` as the
# image's non-root user, and a short `luasched run` inside the image that
# schedules the demo cluster served by `luasched simulate --serve` on the host
# (chroot isolation shares the host's network). Prints the image's size.
# Skipped (77) without root, buildah or debootstrap.
. "$(dirname "$0")/../e2e/lib.bash"
. "$(dirname "$0")/../e2e/serve_lib.bash"
. "$(dirname "$0")/deploy_lib.bash"
need_release_build
need_root
need_tools buildah debootstrap jq
ROOT=${LUASCHED_SOURCE_DIR:-.}
IMAGE=localhost/luasched:ctest
start=$SECONDS

base=$("$ROOT/deploy/base-image.sh" "${BUILDAH_FLAGS[@]}") || { echo "FAIL: base image"; exit 1; }
echo "base image $base ready after $((SECONDS - start)) s"
commit=$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# --layers keeps the package-install steps cached between runs; the build stage
# is tagged so that pruning the untagged images of earlier runs keeps its chain.
build() { # TAG [FLAGS...]
  local tag=$1; shift
  buildah "${BUILDAH_FLAGS[@]}" build --isolation chroot --layers -q -f "$ROOT/deploy/Containerfile" \
    --ignorefile "$ROOT/deploy/containerignore" --build-arg BASE="$base" --build-arg COMMIT="$commit" \
    -t "$tag" "$@" "$ROOT" >> "$TMP/build.log" 2>&1 || { tail -30 "$TMP/build.log"; echo "FAIL: buildah build $tag"; exit 1; }
}
build localhost/luasched-build:ctest --target build
build "$IMAGE"
buildah "${BUILDAH_FLAGS[@]}" rmi --prune >/dev/null 2>&1
echo "image built after $((SECONDS - start)) s"
echo "image size: $(buildah "${BUILDAH_FLAGS[@]}" images --format '{{.Size}}' "$IMAGE")"
expect_eq "the image runs as the non-root user" \
  "$(buildah "${BUILDAH_FLAGS[@]}" inspect --format '{{.OCIv1.Config.User}}' "$IMAGE")" "65532:65532"
expect_eq "the entrypoint is luasched" \
  "$(buildah "${BUILDAH_FLAGS[@]}" inspect --format '{{.OCIv1.Config.Entrypoint}}' "$IMAGE")" '[/usr/bin/luasched]'

ctr=$(buildah "${BUILDAH_FLAGS[@]}" from -q "$IMAGE")
on_exit 'buildah "${BUILDAH_FLAGS[@]}" rm "$ctr" >/dev/null 2>&1'
in_image() { buildah "${BUILDAH_FLAGS[@]}" run --isolation chroot "$ctr" -- "$@"; }

ver=$(in_image /usr/bin/luasched version 2>&1)
expect_contains "version in the image" "$ver" "luasched 0.1.0"
expect_contains "commit in the image" "$ver" "commit: $commit"
expect_contains "LuaJIT in the image" "$ver" "luajit: LuaJIT 2.1"
expect_contains "bundled plugins in the image" "$ver" "plugins: /usr/share/luasched/plugins"
expect_eq "runs as uid 65532" "$(in_image id -u)" "65532"
expect_contains "profiles in the image" "$(in_image ls /usr/share/luasched/profiles/examples)" "plugin-args.yaml"

# A short run inside the image against the served demo cluster.
serve_start "$ROOT/examples/demo-cluster.yaml"
buildah "${BUILDAH_FLAGS[@]}" copy --chown 65532:65532 "$ctr" "$KUBECONFIG_FILE" /tmp/kubeconfig >/dev/null
in_image timeout -s TERM 8 /usr/bin/luasched run --kubeconfig /tmp/kubeconfig --leader-elect=false \
  --secure-port 0 > "$TMP/run.out" 2> "$TMP/run.err" &
RUN_PID=$!
wait_bound 7 60 || echo "FAIL: the pods were not bound by luasched run in the image"
wait "$RUN_PID"
serve_stop
expect_eq "the served cluster saw no double binding" "$SERVE_RC" "0"
expect_contains "run in the image bound shop/web-0" "$(cat "$TMP/serve.out")" "shop/web-0: bound to node-a1"
expect_contains "run in the image logged its start" "$(cat "$TMP/run.err")" "Caches are synced"
echo "image test took $((SECONDS - start)) s"
[ "$failures" -eq 0 ]
