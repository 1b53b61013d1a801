#!/usr/bin/env bash
# apt-get with the arguments given, waiting for another apt or dpkg (apt's daily timers, unattended-upgrades, a
# user's apt-get) to finish instead of failing on its lock. apt-get waits for dpkg's locks itself when
# DPkg::Lock::Timeout is set, but `apt-get update` gives up at once on the lock of its package lists, and neither
# says on the terminal that it waits; so the locks are looked at here first (one line saying who holds them), and
# a run that loses the race for one to another program is tried again. Waits at most PORTICO_APT_WAIT seconds
# (default 600). apt-get's output is appended to LOG; the terminal gets that one line, or the reason it gave up.
# Usage: test/env/apt.sh LOG ARGUMENTS OF apt-get...
set -euo pipefail
log=$1
shift
wait=${PORTICO_APT_WAIT:-600}
deadline=$((SECONDS + wait))
locks=/var/lib/dpkg/lock-frontend,/var/lib/dpkg/lock,/var/lib/apt/lists/lock,/var/cache/apt/archives/lock

# The first program holding one of apt's locks, as "NAME (process PID)"; nothing when none is held. apt and dpkg
# lock with fcntl, which lslocks lists.
holder() {
  lslocks --noheadings --raw --output PID,COMMAND,PATH 2>/dev/null |
    awk -v locks="$locks" 'BEGIN { n = split(locks, l, ","); for (i = 1; i <= n; i++) held[l[i]] = 1 }
      ($3 in held) && $1 != "'"$$"'" { print $2 " (process " $1 ")"; exit }'
}

told=
wait_for_locks() {
  local who
  while who=$(holder) && [ -n "$who" ]; do
    if [ -z "$told" ]; then
      echo "portico: waiting for $who to finish with apt's lock (at most $wait s)..." >&2
      told=1
    fi
    [ $SECONDS -lt $deadline ] ||
      { echo "portico: $who still holds apt's lock after $wait s: let it finish, then run the set-up again" >&2; exit 1; }
    sleep 1
  done
}

errors=$(mktemp)
trap 'rm -f "$errors"' EXIT
while :; do
  wait_for_locks
  left=$((deadline - SECONDS))
  [ $left -gt 0 ] || left=1
  code=0
  apt-get -o DPkg::Lock::Timeout="$left" "$@" >>"$log" 2>"$errors" || code=$?
  cat "$errors" >>"$log"
  [ $code -ne 0 ] || exit 0
  # Another program took a lock between the look above and apt-get's own: wait for it, and try again.
  grep -q -E 'Could not get lock|Unable to (acquire|lock)' "$errors" && [ $SECONDS -lt $deadline ] || exit $code
done
