#!/usr/bin/env bash
# Set up the environment and run the main job at the demo scale: sweeps (embedded multilingual-e5-small, en + ru,
# 3 seeds) -> statistics -> probes -> executed notebooks -> reports/demo/index.html. Re-running reuses finished
# runs and cached vectors. Extra arguments go to `diagnostics pipeline` (e.g. --scale tiny).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# keep the bytecode Python compiles on first import in the project's .venv: where PYTHONDONTWRITEBYTECODE is set
# (some containers set it), every process (each notebook kernel, CLI subprocess and pool worker) compiled torch,
# transformers and pandas from source again, ~4 s of CPU each (setup.sh installs with --no-compile)
unset PYTHONDONTWRITEBYTECODE
export PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/diagnostics pipeline --scale demo "$@"
[ $# -gt 0 ] || echo "demo: open the notebooks on these runs in JupyterLab with \`bash scripts/lab.sh\` (they only read runs/demo);" \
     "the report is reports/demo/index.html"
