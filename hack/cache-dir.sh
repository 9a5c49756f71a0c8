#!/usr/bin/env bash
# Prints the cache directory every catalogbot helper script shares (keyed by tool and version below it).
echo "${CATALOGBOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/catalogbot}"
