# shellcheck shell=bash disable=SC2034 # sourced: run.sh reads the versions
# Agent frameworks at pinned versions, each in its own environment under .cache/interop/ (a venv
# or an npm folder), reused when present. Each speaks the A2A 0.3 wire through an A2A SDK pinned
# below 0.4 (the 0.3 SDK versions of sdks.sh). Sourced by tests/interop/run.sh after sdks.sh;
# expects CACHE to be set.
ADK_PY=2.13.0            # google-adk, RemoteA2aAgent
STRANDS=1.62.0           # strands-agents, A2AAgent
ADK_JS=2.0.0             # @google/adk, RemoteA2AAgent
AI_SDK=6.0.333           # ai (the provider accepts ai 5 and 6)
AI_SDK_A2A=0.5.0-alpha.1 # a2a-ai-provider, the AI SDK's A2A provider (alpha releases only)

ADK_PY_DIR=adk-py-$ADK_PY
STRANDS_DIR=strands-$STRANDS
ADK_JS_DIR=adk-js-$ADK_JS
AI_SDK_DIR=ai-sdk-$AI_SDK-a2a-$AI_SDK_A2A

install_py_framework() { # folder requirement...
    local dir="$CACHE/$1" stamp
    shift
    stamp=".installed-$(printf '%s\n' "$@" | sha256sum | cut -c 1-16)"
    if [ -f "$dir/$stamp" ]; then return 0; fi
    rm -rf "$dir"
    python3 -m venv "$dir" &&
        "$dir/bin/pip" install -q --disable-pip-version-check "$@" >"$dir.log" 2>&1 &&
        touch "$dir/$stamp"
}

install_js_framework() { # folder package@version...
    local dir="$CACHE/$1" name=$1 stamp
    shift
    stamp=".installed-$(printf '%s\n' "$@" | sha256sum | cut -c 1-16)"
    if [ -f "$dir/$stamp" ]; then return 0; fi
    rm -rf "$dir"
    mkdir -p "$dir" &&
        printf '{"name":"a2a-interop-%s","private":true,"type":"module"}\n' "$name" >"$dir/package.json" &&
        (cd "$dir" && npm install --no-audit --no-fund --silent --save-exact "$@" >"$dir.log" 2>&1) &&
        touch "$dir/$stamp"
}
