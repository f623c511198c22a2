#!/usr/bin/env bash
# Installs what luasched needs on Debian 12, only what is missing.
set -euo pipefail
pkgs=(cmake make gcc pkg-config luajit libluajit-5.1-dev libcurl4-openssl-dev libcjson-dev libyaml-dev
      libmicrohttpd-dev libgnutls28-dev libseccomp-dev libssl-dev openssl lua-busted lua-check clang libclang-rt-14-dev python3-yaml
      buildah debootstrap curl jq chromium python3 procps util-linux)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Tools the end-to-end tests drive: kubectl against the served API (and kustomize for
# deploy/), promtool on /metrics; buildah and debootstrap build the image and the chroot
# the .deb is installed in (spec/deploy/).
command -v kubectl >/dev/null || missing+=(kubernetes-client)
command -v promtool >/dev/null || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
