#!/usr/bin/env bash
# Installs the Debian packages the bare-metal tests use as real network clients, when they are missing:
# arping (Thomas Habets' arping, whose output the tests read) and ndisc6 (IPv6 neighbour discovery).
set -euo pipefail
missing=()
command -v arping >/dev/null 2>&1 || missing+=(arping)
command -v ndisc6 >/dev/null 2>&1 || missing+=(ndisc6)
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "portico: ${missing[*]} missing and no apt-get to install them: install them by hand" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "portico: ${missing[*]} missing: run 'sudo apt-get install ${missing[*]}' (the bare-metal tests need root anyway)" >&2; exit 1; }
echo "portico: installing ${missing[*]} from Debian's packages..." >&2
apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
  { echo "portico: apt-get install ${missing[*]} failed (see above)" >&2; exit 1; }
