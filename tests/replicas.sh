#!/usr/bin/env bash
# Three `serve` replicas behind nginx (round robin) sharing one Redis, all on loopback:
# - a task created through one replica is read through another;
# - a user gets one combined limit (a burst of 15 for pro across all replicas, not 45);
# - one replica stopped with SIGTERM mid-load loses no accepted request and causes no transport
#   error at the load balancer;
# - /readyz turns false on a replica whose Redis is gone, and true again when it returns.
# Bounded: every loop has a count and a time limit. Prints `replicas: N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/.."

NGINX=$(command -v nginx) || { echo "tests/replicas.sh: nginx is missing (scripts/test installs it; or: sudo apt-get install nginx)" >&2; exit 1; }

cargo build -q -p magisterium-a2a
BIN=${CARGO_TARGET_DIR:-$PWD/target}/debug/magisterium-a2a
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  [ -n "${KEEP_WORK:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() {
  for _ in $(seq 1 100); do curl -fs -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "nothing answered at $1" >&2; return 1
}

passed=0; failed=0
check() {
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); echo "FAIL $1: expected $3, got $2"; fi
}

REDIS_PORT=$(free_port)
start_redis() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" \
    --logfile "$WORK/redis.log" &
  REDIS_PID=$!
  PIDS+=("$REDIS_PID")
  for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
  echo "redis did not start" >&2; return 1
}
start_redis

export A2A__AUTH__HS256_SECRET=replica-test-secret-0123456789abcdef
export A2A__STORE__BACKEND=redis
export A2A__STORE__REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
export A2A__LIMITS__BACKEND=redis
export A2A__DATA__DIR=$WORK/data
export A2A__LOG__FORMAT=json
export A2A__LIMITS__ENTERPRISE__DEFAULT_PER_MINUTE=1000000
# nginx connects to the replicas from 127.0.0.2 (proxy_bind) and is their one trusted proxy;
# clients reach nginx from 127.0.0.1.
export A2A__SERVER__TRUSTED_PROXIES=127.0.0.2
export A2A__SERVER__FAILED_AUTH_PER_MINUTE_PER_IP=3

PORTS=()
REPLICA_PIDS=()
for i in 1 2 3; do
  port=$(free_port)
  A2A__SERVER__BIND=127.0.0.1:$port "$BIN" --config-dir "$WORK/none" serve >"$WORK/replica$i.out" 2>"$WORK/replica$i.log" &
  REPLICA_PIDS+=("$!")
  PIDS+=("$!")
  PORTS+=("$port")
done
for port in "${PORTS[@]}"; do wait_http "http://127.0.0.1:$port/healthz"; done

LB_PORT=$(free_port)
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx.conf" <<EOF
daemon on;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
worker_processes 1;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $WORK/nginx;
  proxy_temp_path $WORK/nginx;
  fastcgi_temp_path $WORK/nginx;
  uwsgi_temp_path $WORK/nginx;
  scgi_temp_path $WORK/nginx;
  upstream a2a {
    server 127.0.0.1:${PORTS[0]} max_fails=0;
    server 127.0.0.1:${PORTS[1]} max_fails=0;
    server 127.0.0.1:${PORTS[2]} max_fails=0;
  }
  server {
    listen 127.0.0.1:$LB_PORT;
    location / {
      proxy_pass http://a2a;
      proxy_bind 127.0.0.2;
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_next_upstream error timeout;
      proxy_next_upstream_tries 3;
    }
  }
}
EOF
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log"
LB=http://127.0.0.1:$LB_PORT
wait_http "$LB/healthz"

token() { "$BIN" --config-dir "$WORK/none" token --sub "$1" --plan "$2"; }
rpc() { # url token body -> prints "status body"
  curl -s -o "$WORK/body" -w '%{http_code}' "$1/api/v1/a2a" -H "Authorization: Bearer $2" \
    -H 'Content-Type: application/json' -d "$3"
  printf ' '; cat "$WORK/body"
}
field() { python3 -c 'import json,sys; d=json.loads(sys.stdin.read().split(" ",1)[1]); print(eval(sys.argv[1]))' "$1"; }
send_body() { printf '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"%s","role":"user","parts":[{"kind":"data","data":{"date":"2026-12-08"}}],"metadata":{"skillId":"saints_of_the_day"}}}}' "$1"; }

# 1. Written through one replica, read through another.
T=$(token roamer pro)
created=$(rpc "http://127.0.0.1:${PORTS[0]}" "$T" "$(send_body m-roam-1)")
task_id=$(echo "$created" | field 'd["result"]["id"]')
read_back=$(rpc "http://127.0.0.1:${PORTS[2]}" "$T" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks/get\",\"params\":{\"id\":\"$task_id\"}}")
check "a task created on replica 1 is read on replica 3" "$(echo "$read_back" | field 'd["result"]["id"]')" "$task_id"

# 2. One combined limit through the load balancer: pro allows a burst of 15, then one call every
# 4 s (three separate limiters would allow 45). Calls stop at the first 429. On a loaded machine
# the calls can take long enough for the budget to refill: one more call may pass per 4 s taken.
T=$(token limited pro)
ok=0; refused=no
started=$(date +%s%N)
for n in $(seq 1 30); do
  status=$(rpc "$LB" "$T" "$(send_body "m-limit-$n")" | cut -d' ' -f1)
  [ "$status" = 200 ] && ok=$((ok + 1))
  [ "$status" = 429 ] && { refused=yes; break; }
done
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
allowed=$(( 15 + elapsed_ms / 4000 ))
check "a call is refused (429) across three replicas, not after 45" "$refused" yes
check "15 calls pass before it, plus one per 4 s the calls took ($elapsed_ms ms: at most $allowed)" \
  "$([ "$ok" -ge 15 ] && [ "$ok" -le "$allowed" ] && echo "in range" || echo "$ok")" "in range"

# 2b. The failed-auth budget through nginx: it follows the address nginx saw, whatever the
# client writes in X-Forwarded-For, and never refuses a token that verifies. Each replica keeps
# its own budget of 3: nine failures spend all three (round robin), the next three get 429.
statuses=""
for n in $(seq 1 12); do
  status=$(curl -s -o /dev/null -w '%{http_code}' "$LB/api/v1/a2a" -H 'Authorization: Bearer forged.token.value' \
    -H "X-Forwarded-For: 198.51.100.$n" -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}')
  statuses="$statuses $status"
done
check "spoofed X-Forwarded-For hops do not dodge the failed-auth budget" "$statuses" "$(printf ' 401%.0s' $(seq 1 9)) 429 429 429"
T=$(token honest pro)
honest=$(for n in 1 2 3; do rpc "$LB" "$T" "$(send_body "m-honest-$n")" | cut -d' ' -f1; done | tr '\n' ' ')
check "a verified token from the blocked address is served by every replica" "$honest" "200 200 200 "

# 3. SIGTERM one replica mid-load: no transport error, no lost task.
T=$(token loader enterprise)
export LOAD_TOKEN=$T LOAD_URL=$LB/api/v1/a2a LOAD_OUT=$WORK/load.json
python3 - <<'PY' &
import json, os, threading, time, urllib.request, urllib.error
url, token, out = os.environ["LOAD_URL"], os.environ["LOAD_TOKEN"], os.environ["LOAD_OUT"]
results, lock = [], threading.Lock()
def worker(w):
    for n in range(60):
        body = json.dumps({"jsonrpc": "2.0", "id": n, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": f"load-{w}-{n}", "role": "user",
            "parts": [{"kind": "data", "data": {"date": "2026-12-08"}}], "metadata": {"skillId": "saints_of_the_day"}}}}).encode()
        req = urllib.request.Request(url, body, {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        message_id = f"load-{w}-{n}"
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                raw = r.read()
                try:
                    results.append((message_id, r.status, json.loads(raw)))
                except ValueError:
                    results.append((message_id, r.status, raw.decode("utf-8", "replace")))
        except urllib.error.HTTPError as e:
            results.append((message_id, e.code, e.read().decode("utf-8", "replace")))
        except Exception as e:
            results.append((message_id, "transport", repr(e)))
        time.sleep(0.01)
threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
json.dump(results, open(out, "w"))
PY
LOAD_PID=$!
sleep 0.5
kill -TERM "${REPLICA_PIDS[1]}"
wait "$LOAD_PID"
wait "${REPLICA_PIDS[1]}" 2>/dev/null && stopped_cleanly=yes || stopped_cleanly=no
check "the stopped replica exits cleanly after SIGTERM" "$stopped_cleanly" yes
# Every request that failed is named with what it got, on stderr, before the counts.
summary=$(python3 - <<'PY'
import json, os, sys
results = json.load(open(os.environ["LOAD_OUT"]))
def answered(status, body):
    return status == 200 and isinstance(body, dict) and "result" in body
transport = [r for r in results if r[1] == "transport"]
bad = [r for r in results if not answered(r[1], r[2])]
for message_id, status, body in bad:
    print(f"     request {message_id}: {status} {json.dumps(body)[:300]}", file=sys.stderr)
print(len(results), len(transport), len(bad))
PY
)
read -r total transport bad <<<"$summary"
if [ "$bad" != 0 ]; then
  echo "     nginx error log:" >&2; tail -n 20 "$WORK/nginx-error.log" | sed 's/^/     /' >&2
fi
check "240 requests answered during the stop" "$total" 240
check "no transport error at the load balancer" "$transport" 0
check "every request answered with a task" "$bad" 0
lost=$(python3 - "$LB" "$T" <<'PY'
import json, os, sys, urllib.request
lb, token = sys.argv[1], sys.argv[2]
results = json.load(open(os.environ["LOAD_OUT"]))
lost = 0
for _, status, body in results:
    if status != 200 or not isinstance(body, dict) or "result" not in body:
        continue
    task = body["result"]
    req = urllib.request.Request(lb + "/api/v1/a2a", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
        "params": {"id": task["id"]}}).encode(), {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        if json.loads(r.read()).get("result", {}).get("id") != task["id"]:
            lost += 1
print(lost)
PY
)
check "every task a client received can be read back" "$lost" 0

# 4. Readiness follows Redis.
R1=http://127.0.0.1:${PORTS[0]}
check "ready while Redis is up" "$(curl -s -o /dev/null -w '%{http_code}' "$R1/readyz")" 200
kill "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true
not_ready=""
for _ in $(seq 1 50); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$R1/readyz")
  [ "$code" = 503 ] && { not_ready=503; break; }
  sleep 0.1
done
check "not ready while Redis is gone" "$not_ready" 503
start_redis
ready_again=""
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "$R1/readyz")
  [ "$code" = 200 ] && { ready_again=200; break; }
  sleep 0.1
done
check "ready again when Redis returns, without a restart" "$ready_again" 200

echo "replicas: $passed passed, $failed failed"
[ "$failed" = 0 ]
