"""The pipeline's inputs: user data files (``--data KEY=PATH``) and ``--set`` overrides, in one documented place.

Data keys:

* ``mnli`` — MultiNLI train, GLUE ``.tsv`` or MultiNLI ``.jsonl`` (extra English data of §5.3 and §5.4);
* ``<lang>.train``, ``<lang>.validation`` — RTE/TERRa-format JSONL of a language (``fr``, ``de``, ``sv``; also
  ``en`` / ``ru`` to replace the bundled RTE / TERRa);
* ``<lang>.diagnostics`` — AX-b/LiDiRus-format JSONL diagnostic of a language (predictions carry the dataset name
  ``diagnostic_<lang>``, so fr and de never share one).

Overrides are ``key=value`` (values parsed as YAML). Keys naming a :class:`~diagnostics.pipeline.ScaleSpec`
field (``extra_sizes``, ``presence_shares`` ...) reshape the plan; every other key is a sweep-config key applied to
every experiment, exactly as ``diagnostics sweep run --set`` takes it (``seeds``, ``executor``,
``executor_options.timeout_min`` ...).

The inputs a pipeline ran with are recorded as ``<runs>/pipeline.json``; the notebooks read them from there, so
they analyse the plan that was trained. The same file lists, per language, the datasets that stand in for the
study's (``substitutions``, see :func:`load_substitutions`), so that tables can label such a column.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diagnostics.core.errors import UserInputError
from diagnostics.finetune import LANGUAGE_DATA_KEYS
from diagnostics.settings import override_key, split_override, split_pair

INPUTS_FILE = "pipeline.json"
#: A language's data keys: those of the sweep config's ``data.<language>`` (one spelling everywhere).
LANGUAGE_KEYS = LANGUAGE_DATA_KEYS
_DATA_KEY = re.compile(rf"^(mnli|(?P<lang>[a-z]{{2}})\.(?P<part>{'|'.join(LANGUAGE_KEYS)}))$")
#: The spelling of the diagnostic key in inputs recorded before it was one (``pipeline.json`` of older stores).
_RECORDED_SPELLINGS = {"diagnostic": "diagnostics"}


def data_keys() -> list[str]:
    """List every accepted ``--data`` key.

    ``mnli``, then ``<lang>.train``, ``<lang>.validation``, ``<lang>.diagnostics`` per user language.
    """
    from diagnostics.data import USER_LANGUAGES

    return ["mnli"] + [f"{lang}.{part}" for lang in USER_LANGUAGES for part in LANGUAGE_KEYS]


def check_data_key(key: str) -> None:
    """Raise :class:`~diagnostics.core.errors.UserInputError` (with the accepted keys) for an unknown ``--data`` key.

    Unknown means not one of :func:`data_keys`; the message suggests the closest one.
    """
    from diagnostics.data import USER_LANGUAGES

    match = _DATA_KEY.match(key)
    if match is None or match.group("lang") not in (None, *USER_LANGUAGES):
        import difflib

        near = difflib.get_close_matches(key, data_keys(), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise UserInputError(f"--data {key}: unknown data key{hint}; accepted: mnli, <lang>.train, "
                             f"<lang>.validation, <lang>.diagnostics for lang in {', '.join(USER_LANGUAGES)}")


def parse_data(items: list[str]) -> dict[str, str]:
    """Parse ``--data`` items: ``["mnli=/data/train.tsv", "fr.train=fr/train.jsonl"]`` -> ``{key: path}``.

    Keys and paths are stripped; a later item with the same key wins. Raises ``UserInputError`` for an item not
    of the form ``KEY=PATH`` or an unknown key.

    Parameters
    ----------
    items : list of str
        The ``--data`` values, as given.

    Returns
    -------
    dict of str to str
        Data key -> path.
    """
    data = {}
    for item in items:
        key, sep, path = split_pair(item)
        if not sep or not key or not path.strip():
            raise UserInputError(f"--data {item}: expected KEY=PATH, found no '=' or an empty part")
        check_data_key(key)
        data[key] = path.strip()
    return data


@dataclass
class PipelineInputs:
    """Data files and overrides of one pipeline (see the module docstring).

    Parameters
    ----------
    data : dict
        Data key -> file path.
    overrides : list of str
        ``key=value`` overrides, scale settings and sweep keys mixed, in the order given.
    origins : dict, optional
        Override key -> where it was written (``configs/paper.yaml:9``), for errors; an override without one is
        named as ``--set key=value``. Not recorded in ``pipeline.json``.
    """

    data: dict[str, str] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for key in self.data:
            check_data_key(key)

    @classmethod
    def from_mapping(cls, section: dict[str, Any], source: str = "config",
                     origins: dict[str, str] | None = None) -> PipelineInputs:
        """Read a config's ``pipeline:`` section: ``{data: {KEY: PATH}, set: [key=value, ...] or {key: value}}``.

        Relative paths are resolved against the current directory when the pipeline runs. A ``set`` mapping becomes
        ``key=<value as JSON>`` overrides. ``source`` says where the section comes from, for error messages;
        ``origins`` maps an override key to where it is written (``file:line``), see :attr:`origins`. Raises
        ``UserInputError`` for keys other than ``data`` and ``set``, or an unknown data key.

        Parameters
        ----------
        section : dict
            The ``pipeline:`` section as read.
        source : str
            Where the section comes from.
        origins : dict, optional
            Override key -> where it is written.

        Returns
        -------
        PipelineInputs
            The inputs of the section.
        """
        unknown = set(section) - {"data", "set"}
        if unknown:
            raise UserInputError(f"{source}: pipeline: unknown keys {sorted(unknown)}; expected data, set")
        overrides = section.get("set") or []
        if isinstance(overrides, dict):
            overrides = [f"{k}={json.dumps(v)}" for k, v in overrides.items()]
        return cls(data={str(k): str(v) for k, v in (section.get("data") or {}).items()},
                   overrides=[str(o) for o in overrides], origins=dict(origins or {}))

    def merged(self, other: PipelineInputs) -> PipelineInputs:
        """Update these inputs by ``other`` (its data keys replace ours; its overrides apply after ours).

        Parameters
        ----------
        other : PipelineInputs
            The inputs that win.

        Returns
        -------
        PipelineInputs
            New inputs; neither operand changes.
        """
        later = {override_key(o) for o in other.overrides}
        origins = {k: v for k, v in self.origins.items() if k not in later} | other.origins
        return PipelineInputs({**self.data, **other.data}, [*self.overrides, *other.overrides], origins)

    def resolved(self) -> PipelineInputs:
        """Make the data paths absolute (recorded so notebooks find them from any folder).

        Returns
        -------
        PipelineInputs
            New inputs with ``~`` expanded and paths resolved against the current directory.
        """
        return PipelineInputs({k: str(Path(v).expanduser().resolve()) for k, v in self.data.items()},
                              list(self.overrides), dict(self.origins))

    def languages(self) -> list[str]:
        """List the languages some data key names, in key order, without repeats.

        Returns
        -------
        list of str
            The language codes.
        """
        return list(dict.fromkeys(k.split(".")[0] for k in self.data if "." in k))

    def language_files(self, language: str) -> dict[str, str]:
        """Collect the data files given for a language.

        Parameters
        ----------
        language : str
            A language code.

        Returns
        -------
        dict of str to str
            The entries of ``{"train": path, "validation": path, "diagnostics": path}`` that were given.
        """
        return {part: self.data[f"{language}.{part}"] for part in LANGUAGE_KEYS if f"{language}.{part}" in self.data}

    def spec_overrides(self, spec) -> dict[str, Any]:
        """Select the overrides of scale settings (fields of ``spec``), parsed.

        Values are parsed as YAML; a later override of a key wins.

        Parameters
        ----------
        spec : ScaleSpec
            The scale's settings (a dataclass; only its field names are used).

        Returns
        -------
        dict
            Setting -> parsed value.
        """
        fields = {f.name for f in dataclasses.fields(spec)}
        return {key: value for key, value in map(split_override, self.overrides) if key in fields}

    def sweep_overrides(self, spec) -> list[str]:
        """Select the overrides of sweep-config keys (every override that is not a field of ``spec``).

        Parameters
        ----------
        spec : ScaleSpec
            The scale's settings (a dataclass; only its field names are used).

        Returns
        -------
        list of str
            The ``key=value`` overrides, unparsed, in order.
        """
        fields = {f.name for f in dataclasses.fields(spec)}
        return [o for o in self.overrides if split_override(o)[0] not in fields]

    def where(self, override: str) -> str:
        """Name where an override (``key=value``) was given, for error messages.

        Parameters
        ----------
        override : str
            A ``key=value`` override of these inputs.

        Returns
        -------
        str
            ``file:line`` when it came from a config file, else ``--set key=value``.
        """
        return self.origins.get(override_key(override)) or f"--set {override}"

    def to_dict(self) -> dict[str, Any]:
        """Convert to a plain JSON mapping (round-trips through the constructor).

        Returns
        -------
        dict
            ``{"data": {...}, "overrides": [...]}``.
        """
        return {"data": dict(self.data), "overrides": list(self.overrides)}

    def save(self, runs_dir: str | Path, substitutions: dict[str, list[dict]] | None = None) -> Path:
        """Record the inputs as ``<runs_dir>/pipeline.json`` (atomically) and return the file written.

        Parameters
        ----------
        runs_dir : str or Path
            The run store (created when missing).
        substitutions : dict, optional
            Language -> datasets that stand in for the study's (see :func:`load_substitutions`), recorded next to
            the inputs.

        Returns
        -------
        Path
            The file written.
        """
        from diagnostics.core.io_utils import write_json_atomic

        path = Path(runs_dir) / INPUTS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, {**self.to_dict(), "substitutions": substitutions or {}})
        return path


def load_inputs(runs_dir: str | Path) -> PipelineInputs | None:
    """Read the inputs recorded in a run store; ``None`` when it has no ``pipeline.json``.

    Raises ``UserInputError`` when the file is not a valid inputs record.
    """
    path = Path(runs_dir) / INPUTS_FILE
    if not path.is_file():
        return None
    try:
        values = json.loads(path.read_text(encoding="utf-8"))
        overrides = list(values.get("overrides", []))
        return PipelineInputs(_respelt(dict(values.get("data", {}))), overrides,
                              {override_key(o): f"{path} ({o})" for o in overrides})
    except (json.JSONDecodeError, AttributeError, ValueError) as err:
        raise UserInputError(f"{path}: not a pipeline inputs record ({err}); delete it and run the pipeline again") \
            from None


def load_substitutions(runs_dir: str | Path) -> dict[str, list[dict[str, str]]]:
    """Read which datasets of a run store stand in for the study's, per language.

    Language -> one entry per substitute: ``dataset`` (``swediagnostics``), ``role`` (``diagnostic`` or
    ``extra``), ``label`` (the column label, ``sv (SweDiagnostics)``) and ``instead_of`` (what the study used).
    Empty when nothing stands in or the store has no ``pipeline.json``.
    """
    path = Path(runs_dir) / INPUTS_FILE
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")).get("substitutions") or {})
    except (json.JSONDecodeError, AttributeError, ValueError):
        return {}


def _respelt(data: dict[str, str]) -> dict[str, str]:
    """Recorded data keys in today's spelling (``fr.diagnostic`` -> ``fr.diagnostics``)."""
    out = {}
    for key, path in data.items():
        language, dot, part = key.rpartition(".")
        out[f"{language}.{_RECORDED_SPELLINGS.get(part, part)}" if dot else key] = path
    return out
