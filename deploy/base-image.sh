#!/usr/bin/env bash
# base-image.sh: makes the Debian 12 base image the image build starts from,
# without an image registry: debootstrap (minbase) from the Debian archive,
# imported into buildah's store as localhost/luasched-base:bookworm.
#
#   deploy/base-image.sh [BUILDAH_FLAGS...]
#
# The debootstrap tree is kept as a tarball in $LUASCHED_CACHE_DIR (default
# /var/cache/luasched) so later runs on the machine skip it; a fresh machine
# makes it (about 30 s). $DEBIAN_MIRROR overrides the archive.
set -euo pipefail
CACHE=${LUASCHED_CACHE_DIR:-/var/cache/luasched}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
TARBALL=$CACHE/debootstrap-bookworm-minbase.tar
IMAGE=localhost/luasched-base:bookworm

mkdir -p "$CACHE"
exec 9> "$CACHE/base.lock"
flock 9

if [ ! -s "$TARBALL" ]; then
  tree=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$tree"' EXIT
  debootstrap --variant=minbase bookworm "$tree" "$MIRROR" > "$CACHE/debootstrap.log" 2>&1 \
    || { echo "debootstrap failed (log: $CACHE/debootstrap.log)" >&2; exit 1; }
  rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/lib/apt/lists/*
  tar -C "$tree" -cf "$TARBALL.part" . && mv "$TARBALL.part" "$TARBALL"
fi

if [ "${1:-}" = "--tarball-only" ]; then
  echo "$TARBALL"
  exit 0
fi
if ! buildah "$@" images -q "$IMAGE" >/dev/null 2>&1; then
  ctr=$(buildah "$@" from scratch)
  buildah "$@" add "$ctr" "$TARBALL" / >/dev/null
  buildah "$@" config --cmd /bin/bash "$ctr"
  buildah "$@" commit -q "$ctr" "$IMAGE" >/dev/null
  buildah "$@" rm "$ctr" >/dev/null
fi
echo "$IMAGE"
