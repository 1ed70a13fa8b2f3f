#!/usr/bin/env bash
# The conformance report page in a real browser: starts the server with the kit enabled, plays
# a misbehaving client with curl (hundreds of findings), then loads /conformance in headless
# Chromium (Debian's chromium, driven by playwright-core from npm, cached in .cache/tools),
# gives it the client's token and checks the findings appear grouped by rule, repeats collapsed,
# and that another owner's token sees none of them. The screenshot is kept at
# target/artifacts/conformance-page.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHROMIUM=$(command -v chromium || true)
[ -n "$CHROMIUM" ] || { echo "tests/conformance/page.sh: chromium is missing (scripts/test installs it; or: sudo apt-get install chromium)" >&2; exit 1; }
tools=.cache/tools
if [ ! -d "$tools/node_modules/playwright-core" ]; then
  mkdir -p "$tools"
  (cd "$tools" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund --silent playwright-core@1.64.1 >/dev/null)
fi
cargo build -q -p magisterium-a2a
target=${CARGO_TARGET_DIR:-$PWD/target}
BIN=$target/debug/magisterium-a2a
WORK=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Streaming off, so that resubscription is a method the card does not offer (unsupported-method).
export A2A__SERVER__BIND=127.0.0.1:$port A2A__CONFORMANCE__ENABLED=true A2A__DATA__DIR=$WORK/data \
  A2A__AUTH__HS256_SECRET=page-test-secret-0123456789abcdefghij A2A__AGENT__STREAMING=false
"$BIN" --config-dir "$WORK/none" serve >"$WORK/out" 2>"$WORK/log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
base=http://127.0.0.1:$port
for _ in $(seq 1 100); do curl -fs -o /dev/null "$base/healthz" && break; sleep 0.1; done

T=$("$BIN" --config-dir "$WORK/none" token --sub page-user --plan pro)
rpc() { curl -s -o /dev/null "$base/api/v1/a2a" -H "Authorization: Bearer $T" -H 'A2A-Client-Run: page-demo' "$@"; }
rpc -H 'Content-Type: text/plain' -d '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}'
rpc -H 'Content-Type: application/json' -H 'A2A-Simulate: rate_limited;retry_after=30' \
  -d '{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"p-1","role":"user","parts":[{"kind":"text","text":"today"}],"metadata":{"skillId":"saints_of_the_day"}}}}'
rpc -H 'Content-Type: application/json' \
  -d '{"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{"kind":"message","messageId":"p-2","role":"user","parts":[{"kind":"text","text":"today"}],"metadata":{"skillId":"saints_of_the_day"}}}}'
rpc -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":4,"method":"tasks/resubscribe","params":{"id":"x"}}'
for i in $(seq 5 304); do
  rpc -H 'Content-Type: text/plain' -d "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tasks/get\",\"params\":{\"id\":\"x\"}}"
done
OTHER=$("$BIN" --config-dir "$WORK/none" token --sub page-other --plan pro)

mkdir -p "$target/artifacts"
# ES modules resolve packages next to the script: run it from the tools folder.
cp tests/conformance/page.mjs "$tools/conformance-page.mjs"
CHROMIUM=$CHROMIUM TOKEN=$T OTHER_TOKEN=$OTHER node "$tools/conformance-page.mjs" "$base" "$target/artifacts/conformance-page.png"
