#!/usr/bin/env bash
# Installs the Debian packages the tests use, when they are missing:
# - the bare-metal tests' real network clients: arping (Thomas Habets' arping, whose output the tests read)
#   and ndisc6 (IPv6 neighbour discovery); tcpdump, whose kernel timestamps the speaker benchmark reads;
# - FRR (zebra, bgpd, bfdd, vtysh) and frr-pythontools (frr-reload.py): the BGP tests' nodes and router;
# - the local cluster's node software: containerd and runc, the CNI reference plugins, iptables and
#   conntrack for kube-proxy, curl for the clients; buildah and mmdebstrap, which build the images;
# - HAProxy, whose health checkers judge the emulated cloud load balancers' targets, and dnsmasq, which answers
#   for their DNS names (test/harness/cloudEdge/);
# - Prometheus, whose promtool proves the alerting rules (test/integration/monitoring/).
# The tests start these programs themselves, inside their own namespaces: nothing here may run as a service of the
# machine. So the packages go in without their recommendations, no service is started while they install (a
# policy-rc.d refuses every start, as in an image build), and the systemd units of the packages this run installed
# are disabled afterwards (containerd.service, frr.service and logrotate.timer, which FRR depends on), so none
# starts at the machine's next boot. Units of packages that were there before are left as they were. Another apt or
# dpkg at work is waited for (test/env/apt.sh). One line on the terminal; apt's output goes to the log.
set -euo pipefail
missing=()
need() { command -v "$1" >/dev/null 2>&1 || [ -e "$1" ] || missing+=("$2"); }
need arping arping
need ndisc6 ndisc6
need tcpdump tcpdump
need /usr/lib/frr/bgpd frr
need /usr/lib/frr/frr-reload.py frr-pythontools
need containerd containerd
need runc runc
need /usr/lib/cni/bridge containernetworking-plugins
need iptables iptables
need conntrack conntrack
need curl curl
need buildah buildah
need mmdebstrap mmdebstrap
need haproxy haproxy
need dnsmasq dnsmasq-base
need promtool prometheus
[ ${#missing[@]} -eq 0 ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "portico: ${missing[*]} missing and no apt-get to install them: install them by hand" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "portico: ${missing[*]} missing: run 'sudo apt-get install --no-install-recommends ${missing[*]}' (the bare-metal and end-to-end tests need root anyway)" >&2; exit 1; }

root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${PORTICO_CACHE:-$root/.cache}
log=$cache/apt.log record=$cache/host-packages
mkdir -p "$cache"
echo "portico: installing ${missing[*]} from Debian's packages (no service enabled or started; what it installs is listed in $record, apt's output in $log)..." >&2

# A policy-rc.d of our own only when the machine has none, removed however this script ends.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# portico: no service starts while its test packages install\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi

before=$(dpkg-query -W -f '${Package} ${db:Status-Status}\n' | awk '$2=="installed" {print $1}' | sort)
: >"$log"
{ "$root/test/env/apt.sh" "$log" update -qq &&
  DEBIAN_FRONTEND=noninteractive "$root/test/env/apt.sh" "$log" install -y -qq --no-install-recommends "${missing[@]}"; } ||
  { tail -n 20 "$log" >&2; echo "portico: apt-get install ${missing[*]} failed (above, the end of $log)" >&2; exit 1; }
after=$(dpkg-query -W -f '${Package} ${db:Status-Status}\n' | awk '$2=="installed" {print $1}' | sort)

# The packages' maintainer scripts enable their units as they install; this run's new packages are disabled again.
disabled=()
for pkg in $(comm -13 <(echo "$before") <(echo "$after")); do
  for unit in $(dpkg -L "$pkg" 2>/dev/null | grep -E '^(/usr)?/lib/systemd/system/[^/@]+\.(service|timer|socket)$' | xargs -r -n1 basename); do
    [ "$(systemctl --root=/ is-enabled "$unit" 2>/dev/null)" = enabled ] || continue
    # deb-systemd-helper, as the package's own scripts call it, also drops its record of the unit as enabled, so a
    # later upgrade of the package does not enable it again.
    DPKG_MAINTSCRIPT_PACKAGE=${pkg%%:*} deb-systemd-helper disable "$unit" >> "$log" 2>&1 ||
      systemctl --root=/ disable "$unit" >> "$log" 2>&1
    disabled+=("$unit")
  done
done
# What this set-up did to the machine, for the user to read and for the test that checks no unit was left enabled.
{
  echo "# packages installed by test/env/packages.sh on $(date -u +%FT%TZ); the units named were disabled"
  for pkg in $(comm -13 <(echo "$before") <(echo "$after")); do echo "package ${pkg%%:*}"; done
  for unit in "${disabled[@]}"; do echo "unit $unit"; done
} >> "$record"
