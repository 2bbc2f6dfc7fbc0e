#!/usr/bin/env bash
# Install what the slow fault tests of the run store (tests/finetune/test_faults.py) need: `bindfs` (two views of one
# folder whose flocks do not see each other, an unreadable view of a finished run) and `faketime` (a reader whose
# clock is 10 minutes ahead or behind), from the Debian packages of the same names.
# Idempotent and quiet: installs nothing when both are on PATH. Needs apt-get and root (or passwordless sudo); where
# they are missing it installs nothing, says why and exits 0, and the tests that need the tools skip with the same
# reason. A failing apt-get install fails the script (and scripts/test.sh --slow).
set -euo pipefail
source "$(dirname "$0")/apt_packages.sh"
if have bindfs && have faketime; then
  exit 0
fi
apt_packages setup_fault_tools "the fault tests that need them will be skipped" bindfs faketime || exit 0
