#!/usr/bin/env bash
# Installs the Debian packages the tests use, when they are missing:
# - the bare-metal tests' real network clients: arping (Thomas Habets' arping, whose output the tests read)
#   and ndisc6 (IPv6 neighbour discovery); tcpdump, whose kernel timestamps the speaker benchmark reads;
# - FRR (zebra, bgpd, bfdd, vtysh, frr-reload.py): the BGP tests' nodes and router;
# - the local cluster's node software: containerd and runc, the CNI reference plugins, iptables and
#   conntrack for kube-proxy, curl for the clients; buildah and mmdebstrap, which build the images.
set -euo pipefail
missing=()
need() { command -v "$1" >/dev/null 2>&1 || [ -e "$1" ] || missing+=("$2"); }
need arping arping
need ndisc6 ndisc6
need tcpdump tcpdump
need /usr/lib/frr/bgpd frr
need containerd containerd
need runc runc
need /usr/lib/cni/bridge containernetworking-plugins
need iptables iptables
need conntrack conntrack
need curl curl
need buildah buildah
need mmdebstrap mmdebstrap
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "portico: ${missing[*]} missing and no apt-get to install them: install them by hand" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "portico: ${missing[*]} missing: run 'sudo apt-get install ${missing[*]}' (the bare-metal and end-to-end tests need root anyway)" >&2; exit 1; }
echo "portico: installing ${missing[*]} from Debian's packages..." >&2
apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2 ||
  { echo "portico: apt-get install ${missing[*]} failed (see above)" >&2; exit 1; }
