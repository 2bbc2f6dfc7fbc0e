#!/usr/bin/env bash
# Keep notebook outputs out of git: configure this checkout's git so that every *.ipynb (.gitattributes routes them
# to the filter "nbstripout") passes through nbstripout (pinned in pyproject.toml, installed into .venv by
# scripts/setup.sh, which calls this script) whenever git reads it from the working tree: `git add`, `git status`,
# `git diff`. Outputs, execution counts, the Python version Lab records and the view state Lab stores in cell
# metadata (scrolled, collapsed, hidden) never reach git; cell ids and everything else stay as they are, so a committed
# notebook passes through unchanged and a real source edit still shows. The executed file on disk keeps its outputs.
# The settings `nbstripout --install` writes, plus --keep-id / --unix-newlines / extrakeys; idempotent; does nothing
# when git is missing or this folder is not the top of a git checkout (an unpacked sdist, a copy in another repository).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || exit 0
top=$(git rev-parse --show-toplevel 2>/dev/null) || exit 0
[ "$(cd "$top" && pwd -P)" = "$(pwd -P)" ] || exit 0
py="$PWD/.venv/bin/python"
if ! "$py" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('nbstripout') is None)" 2>/dev/null; then
  echo "setup_git: nbstripout is not installed in .venv: run \`bash scripts/setup.sh\`; notebook outputs are not" \
       "stripped from git until then" >&2
  exit 0
fi
# `python -m nbstripout` with one module kept out: rfc3987_syntax, an optional helper of jsonschema that Jupyter's
# stack installs, builds a grammar on import (~1.2 s of the ~1.4 s a run took here); nbformat never uses it, and
# without it a run takes ~0.2 s. git runs the filter for every notebook whose file it has to look at.
code="import sys; sys.modules['rfc3987_syntax'] = None; import nbstripout; nbstripout.main()"
git config filter.nbstripout.clean "\"$py\" -c \"$code\" --keep-id --unix-newlines"
git config filter.nbstripout.smudge cat
git config filter.nbstripout.required true
git config filter.nbstripout.extrakeys "metadata.language_info.version cell.metadata.jupyter"
# A fresh clone's files are as new as its index, so git cannot trust their timestamps and compares each notebook's
# contents (through the filter) on every `git status` until the index is rewritten: refresh it once now.
git update-index -q --refresh >/dev/null 2>&1 || true
