#!/usr/bin/env bash
# Builds Jaeger v2 (cmd/jaeger of github.com/jaegertracing/jaeger v1.76.0)
# once, for `make e2e-jaeger`, and caches the binary at
#
#   ${OTELPFS_CACHE:-$HOME/.cache/otelpfs}/jaeger-<hash>/jaeger
#
# where <hash> is the first 16 hex digits of the SHA-256 of go.mod.in (the
# wrapper module beside this script). Progress goes to stderr; the binary's
# path is the only thing printed on stdout. With --path it only prints where
# the binary is (exit 0) or would be (exit 1), building nothing.
#
# `go install github.com/jaegertracing/jaeger/cmd/jaeger@v1.76.0` refuses
# because of a replace directive in Jaeger's go.mod; the wrapper module
# repeats it. GONOSUMDB is set for this build only: the checksum database
# reachable here lacks those modules. Measured: about 6 minutes and 2.1 GB of
# memory on 2 cores. Never part of `make test`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod="$here/go.mod.in"
hash="$(sha256sum "$mod" | cut -c1-16)"
dir="${OTELPFS_CACHE:-${HOME:-/tmp}/.cache/otelpfs}/jaeger-$hash"
bin="$dir/jaeger"

say() { echo "jaeger: $*" >&2; }
usable() { [ -x "$bin" ] && "$bin" --help >/dev/null 2>&1; }

if [ "${1:-}" = "--path" ]; then
  echo "$bin"
  usable
  exit
fi
[ $# -eq 0 ] || { echo "usage: $0 [--path]" >&2; exit 2; }
if usable; then
  say "cached: $bin"
  echo "$bin"
  exit 0
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
if command -v flock >/dev/null && ! flock -n 9; then
  say "another build is running; waiting for it"
  flock 9
fi
if usable; then
  echo "$bin"
  exit 0
fi

start=$SECONDS
work="$dir/work"
rm -rf "$work"
mkdir -p "$work"
cp "$mod" "$work/go.mod"
cd "$work"
say "building Jaeger v2 in $work (about 6 minutes and 2 GB of memory)"
if ! GOFLAGS=-mod=mod \
  GONOSUMDB=go.opentelemetry.io/collector,github.com/open-telemetry/opentelemetry-collector-contrib \
  go build -trimpath -ldflags="-s -w" -o jaeger github.com/jaegertracing/jaeger/cmd/jaeger >build.log 2>&1; then
  say "build failed:"
  tail -40 build.log >&2
  exit 1
fi
cp jaeger "$bin.tmp"
mv -f "$bin.tmp" "$bin"
cd "$dir"
rm -rf "$work"
say "built in $((SECONDS - start)) s"
echo "$bin"
