# shellcheck shell=bash disable=SC2034 # sourced: the scripts that source it read the versions
# The official SDKs at pinned versions, installed into .cache/interop/ and reused when present.
# Sourced by tests/interop/run.sh and tests/conformance/ci.sh; expects CACHE to be set.
PY_SDK_1=1.3.0
PY_SDK_03=0.3.26
JS_SDK_1=1.3.0
JS_SDK_03=0.3.14
# The optional peers of @a2a-js/sdk's gRPC transport.
GRPC_JS=1.14.7
BUFBUILD_PROTOBUF=2.17.0

install_py() { # folder version [extras, e.g. "[grpc]"]
    local dir="$CACHE/$1" extras=${3:-}
    if [ -f "$dir/.installed-$2$extras" ]; then return 0; fi
    rm -rf "$dir"
    python3 -m venv "$dir" &&
        "$dir/bin/pip" install -q --disable-pip-version-check "a2a-sdk$extras==$2" httpx >"$CACHE/$1.log" 2>&1 &&
        touch "$dir/.installed-$2$extras"
}

install_js() { # folder version [more packages...]
    local dir="$CACHE/$1" version=$2 marker
    shift 2
    marker="$dir/.installed-$version$(printf '%s' "$*" | tr '/ ' '_+')"
    if [ -f "$marker" ]; then return 0; fi
    rm -rf "$dir"
    mkdir -p "$dir" &&
        printf '{"name":"a2a-interop-%s","private":true,"type":"module"}\n' "${dir##*/}" >"$dir/package.json" &&
        (cd "$dir" && npm install --no-audit --no-fund --silent "@a2a-js/sdk@$version" "$@" >"$CACHE/${dir##*/}.log" 2>&1) &&
        touch "$marker"
}
