#!/usr/bin/env bash
# Builds the one binary as a release is built (hack/release.sh: static, trimmed, with the profile
# cmd/catalogbot/release.pgo) into a temporary directory and prints its path: what the benchmarks measure
# is what users run. Run it from the repository root.
#   bin="$(bash bench/catalogbot.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp -d)/catalogbot"
CGO_ENABLED=0 go build -trimpath -pgo=cmd/catalogbot/release.pgo -o "$out" ./cmd/catalogbot
echo "$out"
