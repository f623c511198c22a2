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

# need_release_build: skip (77) in a sanitizer build (the asan preset): a package
# or image made from it would need the sanitizer runtime; the README's test
# command (the default preset) runs these tests.
need_release_build() {
  [ -z "${LUASCHED_SANITIZED:-}" ] || { echo "SKIP: a sanitizer build is not packaged (the default preset tests it)"; exit 77; }
}

need_root() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (debootstrap, chroot, buildah's vfs store)"; exit 77; }
}
