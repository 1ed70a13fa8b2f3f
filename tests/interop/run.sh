#!/usr/bin/env bash
# Interop suite: the built server on loopback, driven by the official A2A client SDKs and by agent
# frameworks (Google ADK for Python and JavaScript, Strands Agents, the Vercel AI SDK's A2A
# provider), all at pinned versions installed into .cache/interop/ (reused when present). One
# client program per SDK version and per framework; each prints `PASS <check>` /
# `FAIL <check>: <why>` lines. Ends with one line `interop: N passed, M failed` and exits
# non-zero on any failure.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/interop"
CACHE="$ROOT/.cache/interop"
# shellcheck source=tests/interop/sdks.sh
. "$HERE/sdks.sh"
# shellcheck source=tests/interop/frameworks.sh
. "$HERE/frameworks.sh"
started=$(date +%s)
cd "$ROOT"

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "interop: \`$1\` is required ($2)" >&2
        echo "interop: 0 passed, 1 failed"
        exit 1
    }
}
need python3 "Python 3.10+ with the venv module, for the Python SDKs"
need node "Node.js 18+, for the JavaScript SDKs"
need npm "npm, to install the JavaScript SDKs"
need curl "to wait for the server"

echo "== build"
cargo build -q -p magisterium-a2a
TARGET_DIR=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
BIN="$TARGET_DIR/debug/magisterium-a2a"

echo "== SDKs and frameworks (cache: ${CACHE#"$ROOT"/})"
installing=$(date +%s)
mkdir -p "$CACHE"
installs=()
install_py "py-$PY_SDK_1" "$PY_SDK_1" "[grpc]" &
installs+=($!)
install_py "py-$PY_SDK_03" "$PY_SDK_03" &
installs+=($!)
install_js "js-$JS_SDK_1" "$JS_SDK_1" &
installs+=($!)
install_js "js-$JS_SDK_03" "$JS_SDK_03" &
installs+=($!)
install_js "js-$JS_SDK_1-grpc" "$JS_SDK_1" "@grpc/grpc-js@$GRPC_JS" "@bufbuild/protobuf@$BUFBUILD_PROTOBUF" &
installs+=($!)
install_py_framework "$ADK_PY_DIR" "google-adk[a2a]==$ADK_PY" "a2a-sdk==$PY_SDK_03" &
installs+=($!)
install_py_framework "$STRANDS_DIR" "strands-agents[a2a]==$STRANDS" "a2a-sdk==$PY_SDK_03" &
installs+=($!)
install_js_framework "$ADK_JS_DIR" "@google/adk@$ADK_JS" "@a2a-js/sdk@$JS_SDK_03" &
installs+=($!)
install_js_framework "$AI_SDK_DIR" "ai@$AI_SDK" "a2a-ai-provider@$AI_SDK_A2A" "@a2a-js/sdk@$JS_SDK_03" &
installs+=($!)
install_failed=0
for pid in "${installs[@]}"; do wait "$pid" || install_failed=1; done
echo "   installed or found in $(($(date +%s) - installing)) s"
if [ "$install_failed" = 1 ]; then
    echo "interop: installing an SDK or a framework failed; see the logs in ${CACHE#"$ROOT"/}/*.log" >&2
    echo "interop: 0 passed, 1 failed"
    exit 1
fi

WORK=$(mktemp -d)
SERVER_PID=
LLM_PID=
cleanup() {
    for pid in $SERVER_PID $LLM_PID; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export A2A__SERVER__BIND="127.0.0.1:$PORT"
export A2A__AUTH__MODE=hs256
A2A__AUTH__HS256_SECRET="interop-$(python3 -c 'import secrets; print(secrets.token_hex(24))')"
export A2A__AUTH__HS256_SECRET
export A2A__STORE__BACKEND=memory
export A2A__DATA__DIR="$WORK/data"
# Pro is generous so every skill can be called; organization allows one call a minute, so the
# second call of an organization token is the exhausted-limit case.
export A2A__LIMITS__PRO__DEFAULT_PER_MINUTE=100
export A2A__LIMITS__PRO__EXPENSIVE_PER_MINUTE=100
export A2A__LIMITS__ORGANIZATION__DEFAULT_PER_MINUTE=1
export A2A__LIMITS__ORGANIZATION__EXPENSIVE_PER_MINUTE=1
export A2A__LOG__LEVEL=warn
# Each client runs its push-notification receiver on loopback.
export A2A__PUSH__ALLOW_PRIVATE_TARGETS=true

# catholic_qa answers through a slow OpenAI-compatible backend on loopback (20 pieces, 150 ms
# apart), so its tasks stay working long enough to stream, resubscribe to, poll and cancel, over
# a small corpus of the suite's own, so that it has passages to cite.
echo "== answering backend"
python3 "$HERE/llm_server.py" "$WORK/llm.port" 20 150 >"$WORK/llm.out" &
LLM_PID=$!
for _ in $(seq 1 100); do
    if [ -s "$WORK/llm.port" ]; then break; fi
    sleep 0.1
done
if [ ! -s "$WORK/llm.port" ]; then
    echo "interop: the answering backend did not start" >&2
    echo "interop: 0 passed, 1 failed"
    exit 1
fi
A2A__LLM__BASE_URL="http://127.0.0.1:$(cat "$WORK/llm.port")/v1"
export A2A__LLM__BASE_URL
export A2A__LLM__MODEL=interop-slow-model
"$BIN" corpus import "$HERE/corpus.jsonl" >"$WORK/import.out" 2>&1 || {
    echo "interop: importing the corpus failed:" >&2
    cat "$WORK/import.out" >&2
    echo "interop: 0 passed, 1 failed"
    exit 1
}

echo "== server on 127.0.0.1:$PORT"
"$BIN" serve >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 100); do
    if curl -fs "$BASE/healthz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "interop: the server did not start:" >&2
        cat "$WORK/server.err" >&2
        echo "interop: 0 passed, 1 failed"
        exit 1
    fi
    sleep 0.1
done

token() { # sub plan
    "$BIN" token --sub "$1" --plan "$2" --ttl 1h
}

passed=0
failed=0
clients=0
run_client() { # label command...
    local label=$1
    shift
    clients=$((clients + 1))
    echo "== $label"
    local out="$WORK/$label.out"
    export A2A_BASE="$BASE"
    export A2A_TOKEN_PRO A2A_TOKEN_FREE A2A_TOKEN_LIMITED
    A2A_TOKEN_PRO=$(token "interop-$label" pro)
    A2A_TOKEN_FREE=$(token "interop-$label-free" free)
    A2A_TOKEN_LIMITED=$(token "interop-$label-limited" organization)
    local status=0 began
    began=$(date +%s)
    "$@" >"$out" 2>&1 || status=$?
    echo "   $label ran in $(($(date +%s) - began)) s"
    local p f
    p=$(grep -c '^PASS ' "$out" || true)
    f=$(grep -c '^FAIL ' "$out" || true)
    sed -n 's/^\(PASS\|FAIL\|SEEN\) /  \1 /p' "$out"
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "  FAIL $label: the client exited with status $status"
        f=1
    fi
    if [ "$f" -ne 0 ]; then
        echo "  -- $label output (tracebacks and details):"
        grep -v '^\(PASS\|SEEN\) ' "$out" | tail -40 | sed 's/^/    /'
    fi
    passed=$((passed + p))
    failed=$((failed + f))
}

run_client py-1.3.0 "$CACHE/py-$PY_SDK_1/bin/python" "$HERE/client_py_v1.py"
run_client py-0.3.26 "$CACHE/py-$PY_SDK_03/bin/python" "$HERE/client_py_v03.py"
run_client js-1.3.0 node "$HERE/client_js.mjs" "$CACHE/js-$JS_SDK_1" default
run_client js-1.3.0-legacy node "$HERE/client_js.mjs" "$CACHE/js-$JS_SDK_1" legacy
run_client js-0.3.14 node "$HERE/client_js.mjs" "$CACHE/js-$JS_SDK_03" native03
# The 1.x SDKs again, set to the HTTP+JSON binding (the same clients, told to prefer it).
run_client py-1.3.0-rest env A2A_BINDING=http+json "$CACHE/py-$PY_SDK_1/bin/python" "$HERE/client_py_v1.py"
run_client js-1.3.0-rest node "$HERE/client_js.mjs" "$CACHE/js-$JS_SDK_1" rest
# The Python 1.x SDK over the gRPC binding, on the card's target (the same port).
run_client py-1.3.0-grpc env A2A_BINDING=grpc "$CACHE/py-$PY_SDK_1/bin/python" "$HERE/client_py_v1.py"
run_client js-1.3.0-grpc node "$HERE/client_js_grpc.mjs" "$CACHE/js-$JS_SDK_1-grpc"
# Each SDK client cancels one working task (checked below); the frameworks cancel none.
cancelling=$clients
# The agent frameworks, no language model on their side: each reaches every skill (through the
# skill's own agent where it cannot set metadata.skillId) and hands its caller the answer's text.
run_client "adk-py-$ADK_PY" "$CACHE/$ADK_PY_DIR/bin/python" "$HERE/client_adk.py"
run_client "strands-$STRANDS" "$CACHE/$STRANDS_DIR/bin/python" "$HERE/client_strands.py"
run_client "adk-js-$ADK_JS" node "$HERE/client_adk.mjs" "$CACHE/$ADK_JS_DIR"
run_client "ai-sdk-$AI_SDK" node "$HERE/client_ai_sdk.mjs" "$CACHE/$AI_SDK_DIR"

if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "  FAIL server: it exited during the run"
    failed=$((failed + 1))
fi
if ! kill -0 "$LLM_PID" 2>/dev/null; then
    echo "  FAIL answering backend: it exited during the run"
    failed=$((failed + 1))
fi
# Cancelling a task drops its request to the backend, which notices at its next writes (the
# last cancel may be a few hundred milliseconds old).
for _ in $(seq 1 50); do
    dropped=$(grep -c '^dropped$' "$WORK/llm.out" || true)
    if [ "$dropped" -ge "$cancelling" ]; then break; fi
    sleep 0.1
done
if [ "$dropped" -eq "$cancelling" ]; then
    echo "  PASS answering backend: the request of each cancelled task was dropped ($dropped)"
    passed=$((passed + 1))
else
    echo "  FAIL answering backend: $dropped streamed answers dropped, expected $cancelling (one cancel per SDK client)"
    failed=$((failed + 1))
fi
echo "== done in $(($(date +%s) - started)) s"
echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
