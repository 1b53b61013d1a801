#!/usr/bin/env bash
# Builds kustomize from the Go module proxy (the same program `kubectl apply -k` embeds), caches it by version
# under .cache/ (or $PORTICO_CACHE), and prints its path on stdout. The manifest tests render the overlays with
# it. Progress goes to stderr; a failure is one line saying what is missing and how to fix it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
# v5.8.3 and later need Go 1.27; v5.8.2 builds with Go 1.26.
version=v5.8.2
fail() { echo "portico: $*" >&2; exit 1; }

dir=$cache/kustomize-$version
if [ ! -x "$dir/kustomize" ]; then
  command -v go >/dev/null 2>&1 || fail "Go is not installed, so kustomize cannot be built: install Go 1.26 or newer (apt-get install golang-go)"
  mkdir -p "$cache"
  echo "portico: building kustomize $version from the Go module proxy (first time only, under a minute)..." >&2
  # A directory of this process's own: parallel test workers may build at the same time.
  tmp=$dir.tmp.$$
  rm -rf "$tmp" && mkdir -p "$tmp"
  # GOTOOLCHAIN=local: never download another Go toolchain, only modules.
  (cd "$tmp" && GOBIN="$tmp" GOTOOLCHAIN=local go install -trimpath "sigs.k8s.io/kustomize/kustomize/v5@$version") > "$cache/build-kustomize.log" 2>&1 ||
    { rm -rf "$tmp"; tail -n 20 "$cache/build-kustomize.log" >&2; fail "building kustomize $version failed (see the Go errors above); check that the Go module proxy is reachable (go env GOPROXY)"; }
  # The first finished build wins; a later one finds the directory there and is dropped.
  mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
fi
echo "$dir/kustomize"
