#!/usr/bin/env bash
# Open the analysis notebooks in JupyterLab. Sets up like the other scripts, registers the Python of .venv as the
# kernel "nli-diagnostics (.venv)" and starts `jupyter lab` on notebooks/, where every notebook reads the demo's
# run store (runs/demo, made by `bash scripts/demo.sh`) and only reads it. An unedited notebook is never marked
# changed, and opening and saving it leaves both files of its pair unchanged; the outputs of a notebook run in Lab
# stay in the file on disk but never reach git (the nbstripout filter that scripts/setup.sh configures; after each
# save diagnostics.notebooks.lab.post_save_hook lets `git status` see that only outputs changed). As root, passes
# --allow-root. Extra arguments go to `jupyter lab` (e.g. --no-browser --port 8890).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
unset PYTHONDONTWRITEBYTECODE  # keep compiled bytecode in .venv (why: scripts/test.sh)
export PYTHONHASHSEED=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# the notebooks find runs/<scale> and reports/<scale> in this checkout whatever the kernel's working directory
export DIAGNOSTICS_ROOT="$PWD"
# the kernels of .venv come before any of the user's own (a ~/.local python3 would otherwise win)
export JUPYTER_PREFER_ENV_PATH=1
# kernel name python3 (what the notebooks name), shown as "nli-diagnostics (.venv)"; idempotent
.venv/bin/python -m ipykernel install --sys-prefix --name python3 --display-name "nli-diagnostics (.venv)" \
  >/dev/null
if [ ! -d runs/demo ]; then
  echo "lab: runs/demo does not exist yet: run \`bash scripts/demo.sh\` first (about 20 minutes on 2 cores);" \
       "until then the notebooks that read runs say which command makes them"
fi
echo "lab: notebooks in $PWD/notebooks read the run store $PWD/runs/demo (set scale / runs_dir in a notebook's" \
     "first code cell for another); kernel \"nli-diagnostics (.venv)\""
root=(--notebook-dir=notebooks)
for arg in "$@"; do  # a folder given on the command line replaces notebooks/
  case "$arg" in --notebook-dir*|--ServerApp.root_dir*|--root-dir*) root=() ;; esac
done
# Jupyter refuses to start as root (containers, CI machines) unless told --allow-root
as_root=()
if [ "$(id -u)" -eq 0 ]; then
  as_root=(--allow-root)
  for arg in "$@"; do [ "$arg" != --allow-root ] || as_root=(); done
  echo "lab: running as root: starting jupyter lab with --allow-root"
fi
# the contents manager serves each notebook with the kernel's Python version in language_info, which Lab otherwise
# adds when the kernel connects, marking an unedited notebook changed (diagnostics/notebooks/lab.py says why)
exec .venv/bin/jupyter lab "${root[@]}" "${as_root[@]}" \
  --ServerApp.contents_manager_class=diagnostics.notebooks.lab.ContentsManager \
  --ContentsManager.pre_save_hook=diagnostics.notebooks.lab.pre_save_hook \
  --ContentsManager.post_save_hook=diagnostics.notebooks.lab.post_save_hook "$@"
