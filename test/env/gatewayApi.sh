#!/usr/bin/env bash
# Fetches the Gateway API release Portico serves (its Go module, which carries the CRDs) from the Go module proxy,
# caches it under .cache/ (or $PORTICO_CACHE), and prints the folder holding config/crd/standard/*.yaml (and
# experimental/) on stdout. The Gateway API integration tests install the CRDs from there, offline after the first
# run. Progress goes to stderr; a failure is one line saying what is missing and how to fix it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
version=v1.6.3
module=sigs.k8s.io/gateway-api
fail() { echo "portico: $*" >&2; exit 1; }

dir=$cache/gateway-api-$version
if [ ! -d "$dir/standard" ]; then
  command -v go >/dev/null 2>&1 || fail "Go is not installed, so the Gateway API CRDs cannot be fetched: install Go (apt-get install golang-go)"
  command -v flock >/dev/null 2>&1 || fail "flock is missing: apt-get install util-linux"
  mkdir -p "$cache"
  # Parallel test workers may fetch at the same time: one downloads, the others wait and find it there.
  exec 9>"$cache/gateway-api.lock"
  flock 9
  if [ ! -d "$dir/standard" ]; then
    echo "portico: downloading $module@$version from the Go module proxy (first time only, seconds)..." >&2
    # GOTOOLCHAIN=local: never download another Go toolchain, only the module. The module cache is Portico's own.
    info=$(GOFLAGS=-mod=mod GOTOOLCHAIN=local GOMODCACHE="$cache/gomod" go mod download -json "$module@$version" 2>"$cache/fetch-gateway-api.log") ||
      { tail -n 20 "$cache/fetch-gateway-api.log" >&2; echo "$info" | tail -n 5 >&2
        fail "downloading $module@$version failed (see above); check that the Go module proxy is reachable (go env GOPROXY)"; }
    src=$(printf '%s' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n1)
    [ -d "$src/config/crd/standard" ] || fail "$module@$version has no config/crd/standard in $src: remove $cache/gomod and retry"
    # A copy of the CRDs alone: the module cache is read-only and its path differs between Go versions.
    tmp=$dir.tmp.$$
    rm -rf "$tmp" && mkdir -p "$tmp"
    cp -r "$src/config/crd/standard" "$src/config/crd/experimental" "$tmp/"
    chmod -R u+w "$tmp"
    rm -rf "$dir" && mv -T "$tmp" "$dir"
  fi
fi
echo "$dir"
