#!/usr/bin/env bash
# The browser tests (tests/e2e/test_web_*.py) drive Debian's chromium through Playwright, launched
# from its executable; nothing downloads a browser of its own. This makes sure the binary exists.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium not found: installing the Debian package chromium" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  exit 0
fi
echo "The browser tests need chromium on PATH: install the Debian package 'chromium' (apt-get install chromium)." >&2
exit 1
