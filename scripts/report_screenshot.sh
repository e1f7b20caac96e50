#!/usr/bin/env bash
# Makes the screenshot of docs/report.md: a 4-run sweep of tests/e2e/sweep.sx,
# its report, and headless Chromium's picture of it (no network).
#
#   scripts/report_screenshot.sh [SEXPGPU [OUT.png]]   # defaults: build/sexpgpu, docs/report.png
#
# The tests run it with OUT in a scratch folder (tests/e2e/report.py); run it
# by hand to refresh docs/report.png. Exits 77 when Chromium is missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sexpgpu="$(realpath "${1:-$root/build/sexpgpu}")"
out="$(realpath -m "${2:-$root/docs/report.png}")"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
  echo "report_screenshot: chromium is not installed (scripts/setup.sh installs it)" >&2
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
env -u SEXPGPU_METRICS -u SEXPGPU_STATUS -u SEXPGPU_CHECKPOINT_DIR XDG_CACHE_HOME="$work/cache" \
  "$sexpgpu" sweep tests/e2e/sweep.sx --set lr=0.01,0.003 --set layers=1,2 --steps 60 --eval-every 10 \
  --dir "$work/sweep" >/dev/null 2>"$work/sweep.err" || { cat "$work/sweep.err" >&2; exit 1; }
"$sexpgpu" report "$work/sweep" -o "$work/report.html" >/dev/null
# --proxy-server to a closed port: the page may reach nothing beyond the file.
"$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --proxy-server=127.0.0.1:9 \
  --user-data-dir="$work/profile" --no-first-run --disable-background-networking --disable-component-update \
  --window-size=1000,1500 --screenshot="$work/shot.png" "file://$work/report.html" 2>"$work/chromium.err" ||
  { cat "$work/chromium.err" >&2; exit 1; }
mv "$work/shot.png" "$out"
echo "report_screenshot: $out"
