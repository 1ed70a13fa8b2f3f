#!/usr/bin/env bash
# The CI recipe of docs/client-testing.md, end to end: the server with the conformance kit, a
# client author's test suite on the official Python SDK (a2a-sdk 0.3.26) with one run per
# scenario, then `conformance report --format junit --fail-on-findings`. A well-behaved client
# passes the gate; the same client retrying a 429 at once fails it. Each JUnit report is
# validated against the Apache Ant JUnit schema (JUnit.xsd, shipped in the PyPI package
# ub-test-reports) with xmlschema. Ends with `conformance ci: N passed, M failed`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
CACHE="$ROOT/.cache/interop"
TOOLS="$ROOT/.cache/tools/junit-schema"
# shellcheck source=tests/interop/sdks.sh
. "$ROOT/tests/interop/sdks.sh"

echo "== build, SDK and schema tools"
cargo build -q -p magisterium-a2a
target=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$target/debug/magisterium-a2a
mkdir -p "$CACHE"
install_py "py-$PY_SDK_03" "$PY_SDK_03" || { echo "installing a2a-sdk failed: $CACHE/py-$PY_SDK_03.log" >&2; exit 1; }
PY="$CACHE/py-$PY_SDK_03/bin/python"
if [ ! -f "$TOOLS/.installed-4.3.2-1.1.0" ]; then
    rm -rf "$TOOLS"
    python3 -m venv "$TOOLS"
    "$TOOLS/bin/pip" install -q --disable-pip-version-check xmlschema==4.3.2 >"$TOOLS.log" 2>&1
    "$TOOLS/bin/pip" install -q --disable-pip-version-check --no-deps ub-test-reports==1.1.0 >>"$TOOLS.log" 2>&1
    touch "$TOOLS/.installed-4.3.2-1.1.0"
fi
XSD=$("$TOOLS/bin/python" -c 'import importlib.resources as r; print(r.files("ub_test_reports") / "schemas" / "JUnit.xsd")')

WORK=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export A2A__SERVER__BIND=127.0.0.1:$port A2A__CONFORMANCE__ENABLED=true A2A__DATA__DIR=$WORK/data \
  A2A__AUTH__HS256_SECRET="ci-$(python3 -c 'import secrets; print(secrets.token_hex(24))')" \
  A2A__LOG__LEVEL=warn
"$BIN" --config-dir "$WORK/none" serve >"$WORK/out" 2>"$WORK/log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
export A2A_BASE=http://127.0.0.1:$port
for _ in $(seq 1 100); do curl -fs -o /dev/null "$A2A_BASE/healthz" && break; sleep 0.1; done

passed=0
failed=0
check() { # name status
    if [ "$2" = 0 ]; then echo "PASS $1"; passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi
}
validate() { # file
    "$TOOLS/bin/python" -c 'import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])' "$XSD" "$1"
}

check "the start-up log says the kit is on" "$(cat "$WORK/out" "$WORK/log" | grep -q 'conformance kit is on' && echo 0 || echo 1)"
for client in good misbehaving; do
    echo "== $client client"
    export A2A_TOKEN
    A2A_TOKEN=$("$BIN" --config-dir "$WORK/none" token --sub "ci-$client" --plan pro)
    flag=""
    [ "$client" = misbehaving ] && flag=--misbehave
    status=0
    "$PY" tests/conformance/client_ci.py $flag >"$WORK/$client.tests" 2>&1 || status=$?
    sed 's/^/  /' "$WORK/$client.tests"
    check "the $client client's own tests pass" "$status"
    status=0
    "$BIN" --config-dir "$WORK/none" conformance report --url "$A2A_BASE" --format junit \
      --fail-on-findings >"$WORK/$client.xml" 2>"$WORK/$client.gate" || status=$?
    sed 's/^/  /' "$WORK/$client.gate"
    if [ "$client" = good ]; then
        check "the gate passes the well-behaved client" "$status"
    else
        check "the gate fails the client that retries too soon" "$([ "$status" -ne 0 ] && echo 0 || echo 1)"
        check "the JUnit report names the rule" "$(grep -q 'type="retry-too-soon"' "$WORK/$client.xml" && echo 0 || echo 1)"
        "$BIN" --config-dir "$WORK/none" conformance report --url "$A2A_BASE" 2>/dev/null | sed 's/^/  /'
    fi
    status=0
    validate "$WORK/$client.xml" || status=$?
    check "the $client client's JUnit report is valid against JUnit.xsd" "$status"
done
# The validator is real: a suite without its required attributes is refused.
sed 's/ hostname="[^"]*"//' "$WORK/good.xml" >"$WORK/broken.xml"
status=0
validate "$WORK/broken.xml" >/dev/null 2>&1 || status=$?
check "the schema refuses a report without hostname" "$([ "$status" -ne 0 ] && echo 0 || echo 1)"
suites=$(grep -c '<testsuite ' "$WORK/good.xml" || true)
check "one test suite per scenario run ($suites)" "$([ "$suites" -ge 8 ] && echo 0 || echo 1)"
echo "conformance ci: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
