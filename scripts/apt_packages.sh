#!/usr/bin/env bash
# Sourced by the setup scripts of optional test tools (setup_browser.sh, setup_fault_tools.sh): one way to install
# Debian packages once, or to say why not and let the tests that need them skip.
#
#   apt_packages TAG "WHAT WILL BE SKIPPED" PACKAGE...
#
# Installs the packages with apt-get as root (or with passwordless sudo) and returns 0. Where apt-get is missing or
# cannot be run as root it installs nothing, prints "TAG: ... WHAT WILL BE SKIPPED" and returns 1, so the caller exits
# 0. A failing apt-get exits the caller with 1.
have() { command -v "$1" >/dev/null 2>&1; }

apt_packages() {
  local tag=$1 skipped=$2
  shift 2
  if ! have apt-get; then
    echo "$tag: apt-get not found, so $* cannot be installed here; $skipped"
    return 1
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if have sudo && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      echo "$tag: apt-get needs root and there is no passwordless sudo, so $* cannot be installed; $skipped"
      return 1
    fi
  fi
  echo "$tag: installing the Debian packages $* with apt-get (once)"
  # explicit exits: `set -e` does not reach into a function called as `apt_packages ... || exit 0`
  "${sudo[@]}" apt-get update -qq || { echo "$tag: apt-get update failed" >&2; exit 1; }
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
    || { echo "$tag: apt-get install $* failed" >&2; exit 1; }
}
