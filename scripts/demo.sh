#!/usr/bin/env bash
# Set up the environment and run the main job at the demo scale: sweeps (embedded multilingual-e5-small, en + ru,
# 3 seeds) -> statistics -> probes -> executed notebooks -> reports/demo/index.html. Re-running reuses finished
# runs and cached vectors. Extra arguments go to `diagnostics pipeline` (e.g. --scale tiny).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
unset PYTHONDONTWRITEBYTECODE  # keep compiled bytecode in .venv (why: scripts/test.sh)
export PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/diagnostics pipeline --scale demo "$@"
[ $# -gt 0 ] || echo "demo: open the notebooks on these runs in JupyterLab with \`bash scripts/lab.sh\` (they only read runs/demo);" \
     "the report is reports/demo/index.html"
