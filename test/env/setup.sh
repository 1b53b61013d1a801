#!/usr/bin/env bash
# Builds or finds everything the local environment runs, caching it by version under .cache/
# (or $PORTICO_CACHE), and prints the paths as one JSON object on stdout:
#   Kubernetes (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl) and etcd, built
#   from the Go module proxy (test/cluster), helm from the same proxy (test/helm), and moto in a virtualenv.
# Progress goes to stderr. Every failure is one line saying what is missing and how to fix it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
fail() { echo "portico: $*" >&2; exit 1; }

cluster_binaries() {
  command -v go >/dev/null 2>&1 || fail "Go is not installed, so Kubernetes cannot be built: install Go 1.24 or newer (apt-get install golang-go)"
  local mod=$root/test/cluster version key dir minor ldflags bin
  version=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3} $1=="k8s.io/kubernetes" {print $2}' "$mod/go.mod" | head -n1)
  key=$(cat "$mod/go.mod" "$mod/go.sum" "$mod"/cmd/*/*.go "$0" | sha256sum | cut -c1-12)
  dir=$cache/cluster-$version-$key
  local binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd)
  local missing=0
  for bin in "${binaries[@]}"; do [ -x "$dir/$bin" ] || missing=1; done
  if [ $missing -eq 1 ]; then
    echo "portico: building Kubernetes $version (control plane, kubelet, kube-proxy, kubectl) and etcd from the Go module proxy (first time only, about five minutes on two cores)..." >&2
    # The release stamps components read for their version (kubelet reports it on its Node, and the
    # apiserver's /version answers with it), as Kubernetes' own build sets them.
    minor=$(echo "$version" | cut -d. -f2)
    ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1"
    ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
    ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitMajor=1"
    ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitMinor=$minor"
    local tmp=$dir.tmp.$$
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$mod" && GOTOOLCHAIN=local go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy \
      k8s.io/kubernetes/cmd/kubectl ./cmd/etcd) > "$cache/build-kubernetes.log" 2>&1 ||
      { rm -rf "$tmp"; tail -n 20 "$cache/build-kubernetes.log" >&2; fail "building Kubernetes failed (see the Go errors above); check that the Go module proxy is reachable (go env GOPROXY)"; }
    rm -rf "$dir" && mv -T "$tmp" "$dir"
  fi
  local json="" sep=""
  for bin in "${binaries[@]}"; do
    # kube-apiserver -> kubeApiserver: the keys the harness reads.
    local name
    name=$(echo "$bin" | awk -F- '{ for (i = 2; i <= NF; i++) $i = toupper(substr($i,1,1)) substr($i,2); print }' OFS='')
    json="$json$sep\"$name\":\"$dir/$bin\""
    sep=,
  done
  printf '%s' "$json"
}

helm_binary() {
  command -v go >/dev/null 2>&1 || fail "Go is not installed, so helm cannot be built: install Go 1.26 or newer (apt-get install golang-go)"
  local mod=$root/test/helm version key dir tmp
  version=$(awk '$1=="helm.sh/helm/v4" {print $2}' "$mod/go.mod" | head -n1)
  key=$(cat "$mod/go.mod" "$mod/go.sum" "$0" | sha256sum | cut -c1-12)
  dir=$cache/helm-$version-$key
  if [ ! -x "$dir/helm" ]; then
    echo "portico: building helm $version from the Go module proxy (first time only, a few minutes on two cores)..." >&2
    # The release's own stamp (`helm version` prints it, templates read it as .Capabilities.HelmVersion), as
    # helm's Makefile sets it for a tagged build.
    local ldflags="-X helm.sh/helm/v4/internal/version.version=$version -X helm.sh/helm/v4/internal/version.gitTreeState=clean"
    # A directory of this process's own: parallel test workers may build at the same time.
    tmp=$dir.tmp.$$
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$mod" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "$ldflags" -o "$tmp/helm" helm.sh/helm/v4/cmd/helm) > "$cache/build-helm.log" 2>&1 ||
      { rm -rf "$tmp"; tail -n 20 "$cache/build-helm.log" >&2; fail "building helm $version failed (see the Go errors above); check that the Go module proxy is reachable (go env GOPROXY)"; }
    # The first finished build wins; a later one finds the directory there and is dropped.
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  fi
  printf '"helm":"%s"' "$dir/helm"
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
  helm) h=$(helm_binary); echo "{$h}" ;;
  all) c=$(cluster_binaries); m=$(moto); h=$(helm_binary); echo "{$c,$m,$h}" ;;
  *) fail "unknown part '$1' (cluster, moto, helm or all)" ;;
esac
