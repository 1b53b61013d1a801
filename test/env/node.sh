#!/usr/bin/env bash
# Prints the directory of a Node.js >= 24 binary, installing the pinned runtime from the npm registry
# (the `node` package, which ships the official binary) into the cache when the system one is older.
set -euo pipefail
pinned=24.21.0
cache=${PORTICO_CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}

if command -v node >/dev/null 2>&1; then
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -ge 24 ]; then dirname "$(command -v node)"; exit 0; fi
fi
dir=$cache/node-$pinned
if [ ! -x "$dir/node_modules/.bin/node" ]; then
  command -v npm >/dev/null 2>&1 || { echo "portico: npm is missing, so Node $pinned cannot be installed: apt-get install npm" >&2; exit 1; }
  mkdir -p "$dir"
  npm install --silent --no-save --no-package-lock --prefix "$dir" "node@$pinned" >&2 ||
    { echo "portico: could not install Node $pinned from the npm registry (npm install node@$pinned failed; see above)" >&2; exit 1; }
fi
echo "$dir/node_modules/.bin"
