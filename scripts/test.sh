#!/usr/bin/env bash
# Set up the environment and run the test suite. `--slow` runs only the slow tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# keep the bytecode Python compiles on first import in the project's .venv: where PYTHONDONTWRITEBYTECODE is set
# (some containers set it), every process (each notebook kernel, CLI subprocess and pool worker) compiled torch,
# transformers and pandas from source again, ~4 s of CPU each (setup.sh installs with --no-compile)
unset PYTHONDONTWRITEBYTECODE
export PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# two test workers already fill two cores: torch's OpenMP threads that wait for a busy core sleep instead of spinning
# (spinning doubled the CPU time of the training tests on a 2-core host; results do not depend on it)
export OMP_WAIT_POLICY=PASSIVE
# both targets run browser tests of the report's explorer page (tests/report/test_explorer_page.py: the page's behaviour
# in the default suite, its paper-scale size and speed in the slow one): Chromium + driver, installed once via apt
bash scripts/setup_browser.sh
if [ "${1:-}" = "--slow" ]; then
  shift
  # the run store's fault tests (tests/finetune/test_faults.py, root only): bindfs views and faketime, via apt once
  bash scripts/setup_fault_tools.sh
  exec .venv/bin/python -m pytest -m slow "$@"
fi
# two workers: most tests are single-threaded Python. Whole modules go to a worker (--dist loadfile), so a module's
# fixtures (the tiny main job, the CLI bad-input cases) run once; tests/conftest.py puts the longest module first
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"
