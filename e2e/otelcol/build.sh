#!/usr/bin/env bash
# Builds the OpenTelemetry Collector described by manifest.yaml (beside this
# script) with the Collector builder, once per manifest: the binary is cached
# at
#
#   ${OTELPFS_CACHE:-$HOME/.cache/otelpfs}/otelcol-<hash>/otelcol-e2e
#
# where <hash> is the first 16 hex digits of the SHA-256 of manifest.yaml and
# the builder's version. Progress goes to stderr; the binary's path is the
# only thing printed on stdout, so callers can write
#
#   OTELPFS_OTELCOL=$(bash e2e/otelcol/build.sh)
#
# With --path it only prints where the binary is (exit 0) or would be (exit 1),
# building nothing.
#
# The build has two steps because the builder's own `go mod tidy` fails on a
# test-only dependency of the contrib file exporter that the module proxy used
# here refuses (403): the first run generates the sources and go.mod (and its
# tidy fails), the second compiles them without regenerating. From cold caches
# this takes about 2 minutes of downloads and 3.5 minutes of compilation on 2
# cores, and about 1.7 GB of module cache.
set -euo pipefail

BUILDER_VERSION=v0.155.0
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
manifest="$here/manifest.yaml"
[ -f "$manifest" ] || { echo "otelcol: no manifest at $manifest" >&2; exit 1; }

hash="$( { cat "$manifest"; echo "builder $BUILDER_VERSION"; } | sha256sum | cut -c1-16)"
cache="${OTELPFS_CACHE:-${HOME:-/tmp}/.cache/otelpfs}"
dir="$cache/otelcol-$hash"
bin="$dir/otelcol-e2e"

say() { echo "otelcol: $*" >&2; }

usable() { [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; }

if [ "${1:-}" = "--path" ]; then
  echo "$bin"
  usable
  exit
fi
[ $# -eq 0 ] || { echo "usage: $0 [--path]" >&2; exit 2; }

if usable; then
  say "cached: $("$bin" --version 2>&1 | head -1)"
  echo "$bin"
  exit 0
fi

mkdir -p "$dir"
# One build at a time per manifest (two `make` runs, or a test and a make).
exec 9>"$dir/.lock"
if command -v flock >/dev/null; then
  if ! flock -n 9; then
    say "another build of this manifest is running; waiting for it"
    flock 9
  fi
fi
if usable; then # built while we waited
  echo "$bin"
  exit 0
fi

start=$SECONDS
work="$dir/work"
rm -rf "$work"
mkdir -p "$work/.bin"
cp "$manifest" "$work/manifest.yaml"
cd "$work"

say "building the Collector (manifest hash $hash) in $work"
say "step 1/3: go install go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"
GOBIN="$work/.bin" go install "go.opentelemetry.io/collector/cmd/builder@$BUILDER_VERSION"

say "step 2/3: generate sources and go.mod (its go mod tidy is expected to fail here)"
if GOFLAGS=-mod=mod .bin/builder --config manifest.yaml >generate.log 2>&1; then
  say "  generated (tidy passed)"
else
  say "  generated; builder exited non-zero as expected: $(grep -m1 -iE 'error|fail' generate.log | cut -c1-160 || true)"
fi
if [ ! -f _build/go.mod ] || [ ! -f _build/main.go ]; then
  say "generation failed; builder output:"
  cat generate.log >&2
  exit 1
fi

say "step 3/3: compile (about 3.5 minutes on 2 cores)"
if ! GOFLAGS=-mod=mod .bin/builder --config manifest.yaml --skip-generate --skip-get-modules >compile.log 2>&1; then
  say "compilation failed; builder output:"
  cat compile.log >&2
  exit 1
fi
[ -x _build/otelcol-e2e ] || { say "the builder reported success but wrote no _build/otelcol-e2e"; cat compile.log >&2; exit 1; }

# Install atomically: a reader never sees a half-written binary.
cp _build/otelcol-e2e "$bin.tmp"
mv -f "$bin.tmp" "$bin"
cd "$dir"
rm -rf "$work"
say "built in $((SECONDS - start)) s: $("$bin" --version 2>&1 | head -1)"
echo "$bin"
