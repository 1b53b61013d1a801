#!/usr/bin/env bash
# A worker node of the local cluster as a set of namespaces: the node's network namespace (made by TestLan),
# a private mount namespace in which the node's own directories are bound over the fixed paths kubelet,
# containerd and the CNI plugins use, and a cgroup subtree that holds every process of the node, containers
# included, so they can all be found and killed however the run ends.
#
#   node.sh hold <cgroup> <netns> <node-dir>   becomes the node's holder: joins <cgroup>, enters a new mount
#                                               namespace and <netns>, binds the node's directories, prints
#                                               "ready" and sleeps until killed (its pid names the node).
#   node.sh run <cgroup> <holder-pid> cmd...   runs cmd in the node: its cgroup, mount and network namespace.
#
# <cgroup> is a path relative to the root of every cgroup v1 hierarchy; it must exist (cgroups.ts makes it).
set -euo pipefail

join_cgroup() {
  local rel=$1 hierarchy
  for hierarchy in /sys/fs/cgroup/*/; do
    # Only the v1 hierarchies: the node runs with kubelet's cgroupfs driver on them.
    [ -f "$hierarchy/cgroup.procs" ] && [ ! -f "$hierarchy/cgroup.controllers" ] || continue
    echo $$ >"$hierarchy$rel/cgroup.procs"
  done
}

# Shadows a global sysctl with a file of the node's own holding the same value: kubelet sets
# vm.overcommit_memory, kernel.panic and others on start, and they must not change for the whole machine.
shadow_sysctl() {
  local key=$1 dir=$2 file
  file=$dir/sysctl/${key//\//.}
  cat "/proc/sys/$key" >"$file"
  mount --bind "$file" "/proc/sys/$key"
}

case ${1:-} in
  hold)
    rel=$2 netns=$3 dir=$4
    join_cgroup "$rel"
    exec unshare --mount --propagation private -- nsenter --net="/run/netns/$netns" -- "$0" setup "$dir"
    ;;
  setup)
    dir=$2
    # /sys as seen from the node's network namespace (its own interfaces under /sys/class/net), with the
    # cgroup hierarchies mounted in it again.
    mkdir -p "$dir/sys"
    mount -t sysfs sysfs "$dir/sys"
    mount --rbind /sys/fs/cgroup "$dir/sys/fs/cgroup"
    mount --move "$dir/sys" /sys
    mkdir -p "$dir/sysctl"
    for key in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops \
      kernel/keys/root_maxkeys kernel/keys/root_maxbytes; do
      shadow_sysctl "$key" "$dir"
    done
    # Paths the components write whatever their configuration says: kubelet's device-plugins directory
    # and pod logs, the CNI plugins' state, the pods' network namespace handles, containerd's shim sockets.
    for pair in kubelet:/var/lib/kubelet cni:/var/lib/cni pod-logs:/var/log/pods container-logs:/var/log/containers \
      netns:/run/netns containerd-run:/run/containerd; do
      mkdir -p "$dir/${pair%%:*}" "${pair#*:}"
      mount --bind "$dir/${pair%%:*}" "${pair#*:}"
    done
    echo ready
    exec sleep infinity
    ;;
  run)
    rel=$2 holder=$3
    shift 3
    join_cgroup "$rel"
    exec nsenter --target "$holder" --mount --net -- "$@"
    ;;
  *)
    echo "usage: node.sh hold <cgroup> <netns> <node-dir> | run <cgroup> <holder-pid> cmd..." >&2
    exit 2
    ;;
esac
