#!/usr/bin/env bash
# Peak private memory of a command: runs it and samples RssAnon (and RssFile, the executable's and
# mapped files' resident pages, which the kernel may drop and share) from /proc/PID/status every few
# milliseconds until it exits. Prints "RSSANON_KB RSSFILE_KB EXIT_CODE" on stdout; the command's own
# output goes to /dev/null. Peak RSS (/usr/bin/time's %M) counts file-backed pages too, so a larger
# executable looks like more memory used: RssAnon is what the process itself allocated.
#   bash bench/rssanon.sh CMD [ARGS...]
set -uo pipefail
"$@" >/dev/null 2>&1 &
pid=$!
anon=0 file=0
while [ -r "/proc/$pid/status" ]; do
	read -r a f < <(awk '/^RssAnon:/ {a=$2} /^RssFile:/ {f=$2} /^State:/ {s=$2} END {if (s != "Z") print a+0, f+0; else print 0, 0}' "/proc/$pid/status" 2>/dev/null || echo "0 0")
	[ "${a:-0}" -gt "$anon" ] && anon=$a
	[ "${f:-0}" -gt "$file" ] && file=$f
	sleep 0.002
done
wait "$pid"
echo "$anon $file $?"
