#!/usr/bin/env bash
# The linter: staticcheck, at the version hack/go.mod pins (its `tool` directive; checksums in
# hack/go.sum), over the product and the tools modules, with staticcheck's default checks. A finding is
# fixed, or kept with a `//lint:ignore CHECK reason` on the line before it, saying why. go vet runs in
# hack/test.sh beside it. staticcheck caches its analysis (in the user cache directory): a second run on
# an unchanged tree takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(mktemp -d)/staticcheck"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go -C hack build -o "$bin" honnef.co/go/tools/cmd/staticcheck
"$bin" ./...
(cd hack && "$bin" -tags tools ./...)
(cd bench && "$bin" ./...)
