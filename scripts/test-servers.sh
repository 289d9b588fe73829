#!/usr/bin/env bash
# Installs the third-party servers the tests start, at pinned versions, under target/test-servers
# (idempotent: a second run does nothing): mock model providers on 127.0.0.1, and MCP servers
# (on stdio; server-everything also serves streamable HTTP with `streamableHttp`, nothing more to
# install).
set -euo pipefail
cd "$(dirname "$0")/.."
AIMOCK_VERSION=1.43.0
LLMOCK_VERSION=0.2.2
MCP_SERVERS_VERSION=2026.8.31
dir=target/test-servers
mkdir -p "$dir/npm" "$dir/py"

if [ ! -f "$dir/npm/node_modules/@copilotkit/aimock/package.json" ] \
   || ! grep -q "\"version\": \"$AIMOCK_VERSION\"" "$dir/npm/node_modules/@copilotkit/aimock/package.json"; then
  command -v npm >/dev/null || { echo "npm is needed to install the aimock test server (apt-get install npm)"; exit 1; }
  echo "== installing @copilotkit/aimock@$AIMOCK_VERSION"
  npm install --no-audit --no-fund --silent --prefix "$dir/npm" "@copilotkit/aimock@$AIMOCK_VERSION"
fi

for server in everything filesystem; do
  manifest="$dir/npm/node_modules/@modelcontextprotocol/server-$server/package.json"
  if [ ! -f "$manifest" ] || ! grep -q "\"version\": \"$MCP_SERVERS_VERSION\"" "$manifest"; then
    command -v npm >/dev/null || { echo "npm is needed to install the MCP test servers (apt-get install npm)"; exit 1; }
    echo "== installing @modelcontextprotocol/server-$server@$MCP_SERVERS_VERSION"
    npm install --no-audit --no-fund --silent --prefix "$dir/npm" "@modelcontextprotocol/server-$server@$MCP_SERVERS_VERSION"
  fi
done

if [ ! -d "$dir/py/llmock-$LLMOCK_VERSION.dist-info" ]; then
  command -v python3 >/dev/null || { echo "python3 is needed for the llmock test server"; exit 1; }
  echo "== installing llmock==$LLMOCK_VERSION"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$dir/py" "llmock==$LLMOCK_VERSION" \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages --target "$dir/py" "llmock==$LLMOCK_VERSION"
fi
