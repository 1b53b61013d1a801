#!/usr/bin/env bash
# Builds what running Kubernetes' own end-to-end tests against the local cluster takes, from the Go module proxy
# and Debian, each cached under $PORTICO_CACHE (default .cache/) by a hash of its inputs, and prints one JSON
# object on stdout:
#   e2eTest  e2e.test at the cluster's release with Kubernetes' sig-network tests alone (test/k8s-e2e/lbsuite)
#   agnhost  registry.k8s.io/e2e-test-images/agnhost:<the tag the release's framework asks for>: agnhost built from
#            the same module, on a Debian root with the tools upstream's Alpine-based image installs
#   coredns  registry.k8s.io/coredns/coredns:<release>, the cluster DNS (test/images/coredns), FROM scratch
# The images are docker-archives that `ctr -n k8s.io images import` names by their reference. Progress goes to
# stderr, one line per step; the builds' own output goes to $PORTICO_CACHE/build-k8s-e2e.log (e2e.test) and
# build-k8s-e2e-images.log (the images), whose end is printed before the line that says what failed and how to fix
# it. The images need root (mmdebstrap, buildah). Usage: test/env/k8s-e2e.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
dir=$cache/images
# The terminal's stderr stays on fd 3 for the steps' lines; once the images' lock is held, everything else written
# to stderr (go, mmdebstrap, buildah) goes to the log.
exec 3>&2
log=
say() {
  echo "portico: $*" >&3
  [ -z "$log" ] || echo "portico: $*" >&2
}
fail() {
  [ -z "$log" ] || { echo "portico: $*" >&2; tail -n 20 "$log" >&3; }
  echo "portico: $*${log:+ (above, the end of $log)}" >&3
  exit 1
}

[ "$(id -u)" -eq 0 ] || fail "test/env/k8s-e2e.sh must run as root (mmdebstrap and buildah need it): run it with sudo"
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed: $2"; }
need go "install Go 1.24 or newer (apt-get install golang-go)"
need buildah "apt-get install buildah"
need mmdebstrap "apt-get install mmdebstrap"
need flock "apt-get install util-linux"

mod=$root/test/k8s-e2e
version=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3} $1=="k8s.io/kubernetes" {print $2}' "$mod/go.mod" | head -n1)
cluster_version=$(awk '$1=="k8s.io/kubernetes" {print $2}' "$root/test/cluster/go.mod" | head -n1)
[ "$version" = "$cluster_version" ] ||
  fail "test/k8s-e2e builds Kubernetes $version but the local cluster runs $cluster_version: make both go.mod files require the same release"
src=$(cd "$mod" && GOTOOLCHAIN=local GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' k8s.io/kubernetes 2>/dev/null) || {
  (cd "$mod" && GOTOOLCHAIN=local go mod download k8s.io/kubernetes) >&2 ||
    fail "could not download k8s.io/kubernetes $version from the Go module proxy (go env GOPROXY)"
  src=$(cd "$mod" && GOTOOLCHAIN=local go list -m -f '{{.Dir}}' k8s.io/kubernetes)
}

# The framework names agnhost by its registry and tag in test/utils/image/manifest.go; the image is loaded
# under exactly that name, so pods find it without a pull.
agnhost_tag=$(sed -n 's/.*configs\[Agnhost\] = Config{list.PromoterE2eRegistry, "agnhost", "\([^"]*\)"}.*/\1/p' "$src/test/utils/image/manifest.go")
e2e_registry=$(sed -n 's/.*PromoterE2eRegistry: *"\([^"]*\)".*/\1/p' "$src/test/utils/image/manifest.go" | head -n1)
[ -n "$agnhost_tag" ] && [ -n "$e2e_registry" ] ||
  fail "cannot find agnhost's image name in k8s.io/kubernetes $version's test/utils/image/manifest.go"
agnhost_ref=$e2e_registry/agnhost:$agnhost_tag
coredns_mod=$root/test/images/coredns
coredns_version=$(awk '$1=="require" && $2=="github.com/coredns/coredns" {print $3}' "$coredns_mod/go.mod")
coredns_ref=registry.k8s.io/coredns/coredns:$coredns_version

key_of() { sha256sum | cut -c1-12; }

# e2e.test, stamped with the release as Kubernetes' own build does (the framework logs it beside the server's).
e2e_seconds=0
e2e_test() {
  local key out tmp start=$SECONDS minor ldflags
  key=$({ cat "$mod/go.mod" "$mod/go.sum" "$mod/lbsuite/lb_test.go"; declare -f e2e_test; } | key_of)
  out=$cache/k8s-e2e-$version-$key
  e2e_path=$out/e2e.test
  [ -x "$e2e_path" ] && return
  # One build at a time: `make test` starts this script in the background while the tests run, and a later call
  # (the conformance test's) waits here for that build instead of making e2e.test a second time.
  mkdir -p "$cache"
  exec 8>"$cache/.k8s-e2e-test.lock"
  flock 8
  [ -x "$e2e_path" ] && return
  say "building Kubernetes $version's e2e.test from the Go module proxy (first time only, minutes on two cores after the cluster's build)..."
  minor=$(echo "$version" | cut -d. -f2)
  ldflags="-X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1"
  ldflags="$ldflags -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitMajor=1"
  ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  tmp=$out.tmp.$$
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$mod" && GOTOOLCHAIN=local go test -c -vet=off -trimpath -ldflags "$ldflags" -o "$tmp/e2e.test" ./lbsuite) \
    >"$cache/build-k8s-e2e.log" 2>&1 ||
    { rm -rf "$tmp"; tail -n 20 "$cache/build-k8s-e2e.log" >&2; fail "building e2e.test failed (see the Go errors above); check that the Go module proxy is reachable (go env GOPROXY)"; }
  mv -T "$tmp" "$out" 2>/dev/null || rm -rf "$tmp"
  e2e_seconds=$((SECONDS - start))
}

# buildah's storage and lock are the ones test/env/images.sh uses, so the two never build at once.
store=$dir/buildah
mkdir -p "$store/root" "$store/runroot"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' "$store/root" "$store/runroot" >"$dir/storage.conf"
export CONTAINERS_STORAGE_CONF=$dir/storage.conf
bah() { buildah --storage-driver vfs --root "$store/root" --runroot "$store/runroot" "$@"; }
containers=()
temporary=()
cleanup() {
  local c
  for c in "${containers[@]}"; do bah rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "${temporary[@]}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
new_scratch() {
  scratch_dir=$(mktemp -d "$dir/tmp.XXXXXX")
  temporary+=("$scratch_dir")
}
locked=0
lock_images() {
  [ $locked -eq 1 ] && return
  exec 9>"$dir/.lock"
  if ! flock -n 9; then
    say "waiting for another image build to finish with $dir..."
    flock 9
  fi
  locked=1
  log=$cache/build-k8s-e2e-images.log
  echo "== test/env/k8s-e2e.sh, $(date -u +%FT%TZ)" >>"$log"
  exec 2>>"$log"
}
# Saves an image as a docker-archive (ctr names an import by its RepoTags) and drops it from the storage.
export_image() {
  local ref=$1 archive=$2
  rm -f "$archive.tmp"
  temporary+=("$archive.tmp")
  bah push --quiet "$ref" "docker-archive:$archive.tmp:$ref" >&2 || fail "buildah push of $ref to $archive failed (see above)"
  mv -f "$archive.tmp" "$archive"
  bah rmi "$ref" >/dev/null 2>&1 || true
}
prune_archives() {
  find "$dir" -maxdepth 1 -name "$1-*.tar" -printf '%T@ %p\n' | sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r -d '\n' rm -f
}

# Upstream's image is Alpine with bind-tools, curl, netcat-openbsd, iproute2, iperf and bash (its Dockerfile),
# and busybox's wget, which tests run in its pods (the source-ranges test); no Alpine mirror is reachable here,
# so the same tools come from Debian. Debian's wget is GNU's, told by /etc/wgetrc to give up after one try as
# busybox's does (it would retry a dropped connection 20 times, each 'not reachable' check taking minutes);
# Debian's busybox wget crashed running the test's command (a segmentation fault). What the Dockerfile adds
# besides is added the same way: /uploads, porter's certificate and key, the agnhost-2 link, and the user and
# group one test expects in the image.
suite=bookworm
agnhost_packages=curl,wget,netcat-openbsd,iproute2,iperf,bind9-dnsutils,bash,ca-certificates
agnhost_seconds=0
agnhost_image() {
  local hash start=$SECONDS work c
  hash=$({
    cat "$mod/go.mod" "$mod/go.sum"
    printf 'suite %s\npackages %s\nref %s\n' "$suite" "$agnhost_packages" "$agnhost_ref"
    declare -f agnhost_image export_image
  } | key_of)
  agnhost_archive=$dir/agnhost-$hash.tar
  [ -s "$agnhost_archive" ] && return
  lock_images
  new_scratch
  work=$scratch_dir
  say "building agnhost $agnhost_tag from k8s.io/kubernetes $version..."
  (cd "$mod" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags='-s -w' -o "$work/agnhost" k8s.io/kubernetes/test/images/agnhost) >&2 ||
    fail "go build of agnhost failed (see above)"
  cp "$src/test/images/agnhost/porter/localhost.crt" "$src/test/images/agnhost/porter/localhost.key" "$work/"
  say "making $agnhost_ref's root filesystem with mmdebstrap (a few minutes)..."
  # mmdebstrap hands apt a pipe as `cat >&N` run by /bin/sh, which takes only one-digit descriptors: the script's
  # own (3 for the terminal, 8 and 9 for its locks) are closed for it, so its pipes land below 10.
  # shellcheck disable=SC2016 # "$1" in the hooks is expanded by mmdebstrap's shell, not here
  mmdebstrap --mode=root --variant=minbase --format=tar --include="$agnhost_packages" \
    --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook="install -m 0755 '$work/agnhost' \"\$1/agnhost\" && ln -s agnhost \"\$1/agnhost-2\"" \
    --customize-hook="install -m 0644 '$work/localhost.crt' '$work/localhost.key' \"\$1/\" && mkdir -p \"\$1/uploads\"" \
    --customize-hook='chroot "$1" groupadd -g 50000 group-defined-in-image' \
    --customize-hook='chroot "$1" useradd -u 1000 -G group-defined-in-image -M -s /bin/sh user-defined-in-image' \
    --customize-hook='ln -sf /usr/bin/iperf "$1/usr/local/bin/iperf" && echo "tries = 1" >>"$1/etc/wgetrc"' \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    "$suite" - "deb http://deb.debian.org/debian $suite main" 3>&- 8>&- 9>&- |
    tar --delete --wildcards './dev/?*' >"$work/rootfs.tar" ||
    fail "mmdebstrap could not build agnhost's root filesystem (see above); deb.debian.org must be reachable over http"
  bah rm --all >/dev/null 2>&1 || true
  c=$(bah from scratch)
  containers+=("$c")
  bah add "$c" "$work/rootfs.tar" / >&2 || fail "buildah add of agnhost's root filesystem failed (see above)"
  bah config --os linux --arch amd64 --workingdir / --entrypoint '["/agnhost"]' --cmd '["pause"]' \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c" >&2
  bah commit --quiet "$c" "$agnhost_ref" >/dev/null || fail "buildah commit of $agnhost_ref failed (see above)"
  export_image "$agnhost_ref" "$agnhost_archive"
  prune_archives agnhost
  agnhost_seconds=$((SECONDS - start))
}

coredns_seconds=0
coredns_image() {
  local hash start=$SECONDS work c
  hash=$({
    (cd "$coredns_mod" && cat go.mod go.sum ./*.go)
    printf 'ref %s\n' "$coredns_ref"
    declare -f coredns_image export_image
  } | key_of)
  coredns_archive=$dir/coredns-$hash.tar
  [ -s "$coredns_archive" ] && return
  lock_images
  new_scratch
  work=$scratch_dir
  say "building CoreDNS $coredns_version from the Go module proxy (test/images/coredns)..."
  (cd "$coredns_mod" && CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags='-s -w' -o "$work/coredns" .) >&2 ||
    fail "go build of test/images/coredns failed (see above); check that the Go module proxy is reachable"
  bah rm --all >/dev/null 2>&1 || true
  c=$(bah from scratch)
  containers+=("$c")
  bah copy "$c" "$work/coredns" /coredns >/dev/null
  # As upstream's image: the binary at /coredns, run as its entry point, DNS on 53.
  bah config --os linux --arch amd64 --entrypoint '["/coredns"]' --port 53/udp --port 53/tcp "$c" >&2
  bah commit --quiet "$c" "$coredns_ref" >/dev/null || fail "buildah commit of $coredns_ref failed (see above)"
  export_image "$coredns_ref" "$coredns_archive"
  prune_archives coredns
  coredns_seconds=$((SECONDS - start))
}

mkdir -p "$dir"
e2e_test
agnhost_image
coredns_image

printf '{"version":"%s","e2eTest":"%s","agnhost":{"ref":"%s","archive":"%s"},"coredns":{"ref":"%s","archive":"%s"},"seconds":{"e2eTest":%d,"agnhost":%d,"coredns":%d}}\n' \
  "$version" "$e2e_path" "$agnhost_ref" "$agnhost_archive" "$coredns_ref" "$coredns_archive" \
  "$e2e_seconds" "$agnhost_seconds" "$coredns_seconds"
