#!/usr/bin/env bash
# Install what the browser test of the report's explorer page (tests/report/test_explorer_page.py) needs: Chromium and
# its WebDriver from the Debian packages `chromium` and `chromium-driver`.
# Idempotent: installs nothing when both are already on PATH. Needs apt-get and root (or passwordless sudo); where
# apt-get cannot be used it installs nothing, says why and exits 0, and the test skips with the same reason. A
# failing apt-get install fails the script (and scripts/test.sh).
set -euo pipefail
source "$(dirname "$0")/apt_packages.sh"
if { have chromium || have chromium-browser; } && have chromedriver; then
  echo "setup_browser: chromium and chromedriver found ($(command -v chromedriver)); nothing to install"
  exit 0
fi
skipped="the browser tests will be skipped (run this script as root, or install Chromium and its driver by hand)"
apt_packages setup_browser "$skipped" chromium chromium-driver || exit 0
echo "setup_browser: installed $(chromium --version 2>/dev/null || echo chromium)" \
     "and $(chromedriver --version | cut -d' ' -f1-2)"
