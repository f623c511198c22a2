# Helpers for the deployment tests (sourced after spec/e2e/lib.bash): skipping
# through ctest's SKIP_RETURN_CODE (77) when a tool or root is missing, and the
# buildah flags every test uses (vfs storage under the cache directory, chroot
# isolation: no daemon, no registry, no user namespaces needed).
CACHE=${LUASCHED_CACHE_DIR:-/var/cache/luasched}
BUILDAH_FLAGS=(--root "$CACHE/buildah" --runroot "/run/luasched-buildah" --storage-driver vfs)

# need_tools TOOL...: skip (77) unless each is on PATH; .ci/deps.sh installs them.
need_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (.ci/deps.sh installs it)"; exit 77; }
  done
}

need_root() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (debootstrap, chroot, buildah's vfs store)"; exit 77; }
}
