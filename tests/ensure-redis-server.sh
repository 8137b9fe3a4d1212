#!/usr/bin/env bash
# The Redis tests start their own redis-server on free ports; this makes sure the binary exists.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "redis-server not found: installing the Debian package redis-server" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  # The package may start a system service; the tests never use it.
  exit 0
fi
echo "The Redis tests need redis-server and redis-cli on PATH: install the Debian package 'redis-server' (apt-get install redis-server)." >&2
exit 1
