#!/usr/bin/env bash
# Builds the packet-socket addon into speaker/native/build/Release/portico_packet.node with node-gyp, which
# ships inside npm. Node's headers come from the running Node.js installation (or NODE_DIR, a directory with
# include/node), so nothing is downloaded. With PORTICO_BUILD_LOG set (the set-up's), node-gyp's and the compiler's
# lines go to that file and one line to stderr, the log's end too when the build fails; otherwise all to stderr.
# Usage: speaker/native/build.sh [--force]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/build/Release/portico_packet.node
fresh() {
  [ -f "$out" ] || return 1
  for source in "$here"/*.c "$here"/*.h "$here/binding.gyp"; do [ "$out" -nt "$source" ] || return 1; done
}
if [ "${1:-}" != "--force" ] && fresh; then
  exit 0
fi
# The headers sit beside the binary: <prefix>/include/node for an official or distribution install, and in
# the platform package for the npm registry's `node` package (.cache/node-*/node_modules/node).
prefix=$(cd "$(dirname "$(node -p process.execPath)")/.." && pwd)
nodedir=${NODE_DIR:-}
if [ -z "$nodedir" ]; then
  for candidate in "$prefix" "$prefix"/node_modules/node-linux-*; do
    if [ -f "$candidate/include/node/node_api.h" ]; then nodedir=$candidate; break; fi
  done
fi
if [ -z "$nodedir" ] || [ ! -f "$nodedir/include/node/node_api.h" ]; then
  echo "portico: Node.js headers not found beside $(node -p process.execPath) (set NODE_DIR to a directory with include/node)" >&2
  exit 1
fi
npm_bin=$(command -v npm || true)
gyp=${NODE_GYP:-}
if [ -z "$gyp" ] && [ -n "$npm_bin" ]; then
  candidate=$(dirname "$(readlink -f "$npm_bin")")/../node_modules/node-gyp/bin/node-gyp.js
  [ -f "$candidate" ] && gyp=$candidate
fi
if [ -z "$gyp" ]; then
  echo "portico: node-gyp not found (it ships with npm: apt-get install npm, or set NODE_GYP)" >&2
  exit 1
fi
# The log is named from the caller's directory; the build runs in the addon's.
log=${PORTICO_BUILD_LOG:-}
if [ -n "$log" ]; then
  mkdir -p "$(dirname "$log")"
  log=$(cd "$(dirname "$log")" && pwd)/$(basename "$log")
fi
cd "$here"
if [ -n "$log" ]; then
  echo "portico: building the speaker's packet-socket addon with node-gyp (log in $log)..." >&2
  node "$gyp" rebuild --nodedir="$nodedir" --loglevel=warn >"$log" 2>&1 || {
    tail -n 20 "$log" >&2
    echo "portico: node-gyp could not build the speaker's addon (above, the end of $log)" >&2
    exit 1
  }
else
  node "$gyp" rebuild --nodedir="$nodedir" --loglevel=warn >&2
fi
test -f "$out"
