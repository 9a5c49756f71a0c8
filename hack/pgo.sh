#!/usr/bin/env bash
# Regenerates cmd/catalogbot/release.pgo: the CPU profile the release build (hack/release.sh) and the
# benchmarks' build (bench/catalogbot.sh) apply to the one binary with -pgo (profile-guided optimisation: Go
# inlines and devirtualises what the profile shows hot). Not named default.pgo: -pgo=auto would apply it to
# every go build, go run and go test of the binary, compiling every dependency a second time. It
# is the profile of the work people wait for: validating the shared YAML and JSON catalogs (the lean
# load, the rules), loading them whole (render, policy) and writing them back (render's output). Run it
# after changing the loader, the converter or the rules; docs/benchmarks.md says what it buys.
#   bash hack/pgo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the benchmarks read ../shared/data (or $CATALOGBOT_SHARED_DATA) and fail without it
go test ./checks/validate -run '^$' -bench 'ValidateYAML|ValidateComposed' -benchtime 15x -cpuprofile "$tmp/validate.prof" -o "$tmp/validate.test"
go test ./catalog -run '^$' -bench 'LoadYAMLCatalogs|LoadComposed' -benchtime 5x -cpuprofile "$tmp/load.prof" -o "$tmp/catalog.test"
# writing composed-279 as YAML takes seconds (sigs.k8s.io/yaml): once each, or it would be most of the profile
go test ./catalog -run '^$' -bench 'WriteJSON|WriteYAML' -benchtime 1x -cpuprofile "$tmp/write.prof" -o "$tmp/catalog.test"
go tool pprof -proto "$tmp/validate.prof" "$tmp/load.prof" "$tmp/write.prof" >cmd/catalogbot/release.pgo
echo "wrote cmd/catalogbot/release.pgo ($(wc -c <cmd/catalogbot/release.pgo) bytes)"
