#!/usr/bin/env bash
# Checks the container files without a container engine: docker-compose.yml against the
# Compose schema and best practices (dclint, from npm, cached in .cache/tools), and that the
# compose file, the Dockerfile and tests/replicas.sh (which runs the same topology on loopback)
# agree on configuration keys, ports and commands.
set -euo pipefail
cd "$(dirname "$0")/.."
passed=0; failed=0
check() {
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "ok   $1"
  else failed=$((failed + 1)); echo "FAIL $1: expected $3, got $2"; fi
}

tools=.cache/tools
if [ ! -x "$tools/node_modules/.bin/dclint" ]; then
  mkdir -p "$tools"
  (cd "$tools" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent dclint@3.1.0 >/dev/null)
fi
if "$tools/node_modules/.bin/dclint" docker-compose.yml >/tmp/dclint.out 2>&1; then lint=clean; else lint=errors; cat /tmp/dclint.out; fi
check "docker-compose.yml passes dclint (Compose schema)" "$lint" clean

keys() { grep -oE 'A2A__[A-Z_]+' "$1" | sort -u; }
missing=$(comm -23 <(keys docker-compose.yml) <( (keys tests/replicas.sh; echo A2A__SERVER__PUBLIC_URL; echo A2A__AUTH__MODE) | sort -u) | tr "\n" " ")
check "every key the compose file sets is exercised by tests/replicas.sh" "$missing" ""
for key in $(keys docker-compose.yml) $(keys Dockerfile); do
  section=$(echo "$key" | sed -E 's/^A2A__([A-Z]+)__.*/\1/' | tr 'A-Z' 'a-z')
  grep -q "^\[$section" config/default.toml || { check "$key is a known section" "unknown" "known"; }
done
secret=$(grep -E '^\s*A2A__AUTH__HS256_SECRET:' docker-compose.yml | sed -E 's/^[^:]*:\s*//')
check "the compose file takes the HS256 secret from .env, required, not a constant" \
  "$(echo "$secret" | grep -cE '^"\$\{A2A__AUTH__HS256_SECRET:\?[^}]+\}"$')" 1
check "no secret-looking constant is committed in the compose file" \
  "$(grep -ciE '(secret|password|api_key)[A-Z_]*:\s*"[^$]' docker-compose.yml || true)" 0
check ".env is ignored by git and kept out of the image" \
  "$(grep -cxF '/.env' .gitignore)$(grep -cxF '.env' .dockerignore)" 11
check "the README tells the user to create .env for the compose file" \
  "$(grep -cE 'A2A__AUTH__HS256_SECRET=.*> \.env' README.md)" 1
check "the Dockerfile health check probes /healthz" "$(grep -c 'HEALTHCHECK.*/healthz' Dockerfile)" 1
check "the Dockerfile runs as a non-root user" "$(grep -cE '^USER [a-z0-9]+' Dockerfile)" 1
check "the image listens where compose and nginx expect (8080)" "$(grep -c 'A2A__SERVER__BIND=0.0.0.0:8080' Dockerfile)" 1
check "nginx proxies to the compose replicas on 8080" "$(grep -c 'server a2a-[12]:8080' deploy/nginx.conf)" 2
check "both nginx configs retry a refused connection on the next replica" \
  "$(grep -c 'proxy_next_upstream error timeout' deploy/nginx.conf tests/replicas.sh | awk -F: '{s+=$2} END {print s}')" 2

echo "deployment: $passed passed, $failed failed"
[ "$failed" = 0 ]
