#!/usr/bin/env bash
# runc wrapper registered as dockerd's default runtime on machines whose capability bounding set lacks
# CAP_SYS_RESOURCE (some VMs). Docker 20.10 grants --privileged containers a fixed list of every
# capability, and runc then fails with "operation not permitted". This removes CAP_SYS_RESOURCE from the
# OCI spec (create/run) and from the process file (exec) and hands over to the real runc.
set -euo pipefail
real=${CATALOGBOT_REAL_RUNC:-/usr/bin/runc}
strip() {
  local f=$1 tmp
  [ -f "$f" ] || return 0
  tmp=$(mktemp "$f.XXXXXX")
  jq 'def drop: if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end;
      if has("process") then .process.capabilities |= (if . == null then . else map_values(drop) end)
      else .capabilities |= (if . == null then . else map_values(drop) end) end' "$f" >"$tmp"
  mv "$tmp" "$f"
}
cmd="" bundle="" process=""
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  a=${args[$i]}
  case "$a" in
    create|run|exec) [ -z "$cmd" ] && cmd=$a ;;
    --bundle|-b) bundle=${args[$((i + 1))]} ;;
    --bundle=*) bundle=${a#--bundle=} ;;
    --process|-p) process=${args[$((i + 1))]} ;;
    --process=*) process=${a#--process=} ;;
  esac
done
case "$cmd" in
  create|run) strip "${bundle:-.}/config.json" ;;
  exec) [ -n "$process" ] && strip "$process" ;;
esac
exec "$real" "$@"
