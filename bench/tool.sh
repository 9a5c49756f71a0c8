#!/usr/bin/env bash
# Builds one of the benchmark commands of the bench module (bench/go.mod: their dependencies stay out of
# the product's go.mod) into a temporary directory and prints its path; run it from the repository root,
# where the benchmark scripts' paths are relative to.
#   "$(bash bench/tool.sh renderbench)" ARGS...
set -euo pipefail
name="${1:?usage: bench/tool.sh COMMAND (imagesbench, publishbench, renderbench, templatebench)}"
out="$(mktemp -d)/$name"
go -C "$(dirname "$0")" build -o "$out" "./$name"
echo "$out"
