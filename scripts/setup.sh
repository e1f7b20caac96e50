#!/usr/bin/env bash
# Installs every Debian package sexpgpu builds, tests and benchmarks with.
# Idempotent: a machine that already has them spends a second here.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang libclang-rt-14-dev pkg-config
      libopenblas-dev nlohmann-json3-dev libcli11-dev libfmt-dev
      libcurl4-openssl-dev libssl-dev libzstd-dev libarchive-dev libxxhash-dev
      libgtest-dev libgmock-dev libbenchmark-dev python3 libpcre2-dev libutf8proc-dev
      libgloo-dev)
pkgs+=(protobuf-compiler tmux)  # tests: TensorBoard files decoded by protoc (e2e/tensorboard.py); watch in a terminal (e2e/watch.py)
pkgs+=(chromium tidy)  # tests: the report opened in headless Chromium and validated by tidy (e2e/report.py)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
