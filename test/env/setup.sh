#!/usr/bin/env bash
# Builds or finds everything the local environment runs, caching it by version under .cache/
# (or $PORTICO_CACHE), and prints the paths as one JSON object on stdout:
#   kube-apiserver and etcd, built from the Go module proxy (test/cluster), and moto in a virtualenv.
# Progress goes to stderr. Every failure is one line saying what is missing and how to fix it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
fail() { echo "portico: $*" >&2; exit 1; }

cluster_binaries() {
  command -v go >/dev/null 2>&1 || fail "Go is not installed, so kube-apiserver and etcd cannot be built: install Go 1.24 or newer (apt-get install golang-go)"
  local mod=$root/test/cluster version key dir
  version=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3} $1=="k8s.io/kubernetes" {print $2}' "$mod/go.mod" | head -n1)
  key=$(cat "$mod/go.mod" "$mod/go.sum" "$mod"/cmd/*/*.go | sha256sum | cut -c1-12)
  dir=$cache/cluster-$version-$key
  if [ ! -x "$dir/kube-apiserver" ] || [ ! -x "$dir/etcd" ]; then
    echo "portico: building kube-apiserver $version and etcd from the Go module proxy (first time only, several minutes)..." >&2
    mkdir -p "$dir.tmp"
    (cd "$mod" && go build -trimpath -o "$dir.tmp/" k8s.io/kubernetes/cmd/kube-apiserver ./cmd/etcd) >&2 ||
      fail "building kube-apiserver/etcd failed (see the Go errors above); check that the Go module proxy is reachable (go env GOPROXY)"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  printf '"kubeApiserver":"%s","etcd":"%s"' "$dir/kube-apiserver" "$dir/etcd"
}

moto() {
  command -v python3 >/dev/null 2>&1 || fail "Python 3 is not installed, so the AWS emulator (moto) cannot run: apt-get install python3 python3-venv"
  local req=$root/test/env/requirements-moto.txt key dir
  key=$(sha256sum "$req" | cut -c1-12)
  dir=$cache/moto-$key
  # A virtualenv records its own path, so it is built in place; the stamp marks a finished install.
  if [ ! -e "$dir/.installed" ]; then
    echo "portico: installing moto from PyPI into $dir (first time only)..." >&2
    rm -rf "$dir"
    python3 -m venv "$dir" >&2 || fail "python3 -m venv failed: apt-get install python3-venv"
    "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2 ||
      fail "pip could not install moto from PyPI (see above)"
    touch "$dir/.installed"
  fi
  printf '"motoServer":"%s"' "$dir/bin/moto_server"
}

# Each part runs in a command substitution of its own; assigning it first lets `set -e` stop on its failure.
case ${1:-all} in
  cluster) c=$(cluster_binaries); echo "{$c}" ;;
  moto) m=$(moto); echo "{$m}" ;;
  all) c=$(cluster_binaries); m=$(moto); echo "{$c,$m}" ;;
  *) fail "unknown part '$1' (cluster, moto or all)" ;;
esac
