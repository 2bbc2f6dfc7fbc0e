#!/usr/bin/env bash
# Install what the slow fault tests of the run store (tests/finetune/test_faults.py) need: `bindfs` (two views of one
# folder whose flocks do not see each other, an unreadable view of a finished run) and `faketime` (a reader whose
# clock is 10 minutes ahead or behind), from the Debian packages of the same names.
# Idempotent and quiet: installs nothing when both are on PATH. Needs apt-get and root (or passwordless sudo); where
# they are missing it installs nothing, says why and exits 0, and the tests that need the tools skip with the same
# reason. A failing apt-get install fails the script (and scripts/test.sh --slow).
set -euo pipefail
have() { command -v "$1" >/dev/null 2>&1; }
if have bindfs && have faketime; then
  exit 0
fi
if ! have apt-get; then
  echo "setup_fault_tools: apt-get not found, so bindfs and faketime cannot be installed here; the fault tests" \
       "that need them will be skipped"
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif have sudo && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "setup_fault_tools: apt-get needs root and there is no passwordless sudo, so bindfs and faketime cannot be" \
       "installed; the fault tests that need them will be skipped"
  exit 0
fi
echo "setup_fault_tools: installing the Debian packages bindfs and faketime with apt-get (once)"
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends bindfs faketime \
  >/dev/null
