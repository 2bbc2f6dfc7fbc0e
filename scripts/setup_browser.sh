#!/usr/bin/env bash
# Install what the browser test of the report's explorer page (tests/report/test_explorer_page.py) needs: Chromium and
# its WebDriver from the Debian packages `chromium` and `chromium-driver`.
# Idempotent: installs nothing when both are already on PATH. Needs apt-get and root (or passwordless sudo); where
# apt-get cannot be used it installs nothing, says why and exits 0, and the test skips with the same reason. A
# failing apt-get install fails the script (and scripts/test.sh).
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
if { have chromium || have chromium-browser; } && have chromedriver; then
  echo "setup_browser: chromium and chromedriver found ($(command -v chromedriver)); nothing to install"
  exit 0
fi
if ! have apt-get; then
  echo "setup_browser: apt-get not found, so chromium and chromium-driver cannot be installed here;" \
       "the browser test will be skipped (install Chromium and its driver by hand to run it)"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif have sudo && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "setup_browser: apt-get needs root and there is no passwordless sudo, so chromium and chromium-driver" \
       "cannot be installed; the browser test will be skipped (run this script as root to enable it)"
  exit 0
fi
echo "setup_browser: installing the Debian packages chromium and chromium-driver with apt-get (once)"
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
  chromium-driver
echo "setup_browser: installed $(chromium --version 2>/dev/null || echo chromium)" \
     "and $(chromedriver --version | cut -d' ' -f1-2)"
