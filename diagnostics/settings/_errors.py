"""Where settings came from and what is wrong with them: :class:`ConfigSource` names the file and line of a key
(or the ``--set`` override that set it), :class:`ConfigError` holds every problem, each named that way."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from diagnostics.core.errors import UserInputError


class ConfigError(UserInputError):
    """Sweep config values that cannot be right, one ``(key, message)`` per problem, all on one line.

    Each problem reads ``<file>:<line>: <key>: expected ..., found ...`` when the config came from a file (the
    line of the key), ``<file> (--set key=value): <key>: ...`` when an override set it, else ``<key>: ...``.

    Parameters
    ----------
    problems : list of (str, str)
        Dotted key (``lr``, ``extra_data.size``, ``models[0].path``; ``""`` for the whole file) and message.
    source : ConfigSource, optional
        Where the values came from.
    """

    def __init__(self, problems: list[tuple[str, str]], source: ConfigSource | None = None):
        self.problems = list(problems)
        self.source = source
        super().__init__("; ".join(self.lines()))

    def lines(self) -> list[str]:
        """Every problem as one located line.

        Returns
        -------
        list of str
            ``<where>: <key>: <message>`` per problem (``<where>`` left out when unknown).
        """
        out = []
        for key, message in self.problems:
            where = self.source.where(key) if self.source is not None else None
            out.append(": ".join(part for part in (where, key, message) if part))
        return out

    def located(self, source: ConfigSource | None) -> ConfigError:
        """The same problems named with ``source`` (unchanged when already located or ``source`` is None).

        Parameters
        ----------
        source : ConfigSource or None

        Returns
        -------
        ConfigError
        """
        if self.source is not None or source is None:
            return self
        return ConfigError(self.problems, source)


_KEY_PARTS = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class ConfigSource:
    """Where a config's values came from: its file (with the line of every key for YAML) and the overrides.

    Parameters
    ----------
    path : str, optional
        The config file.
    document : object, optional
        The file's mapping as read by :func:`diagnostics.core.yaml_lines.load_yaml_lines` (lines of keys), if YAML.
    overrides : tuple of (str, str or None)
        Dotted key and how it was given (``--set lr=1``; ``None`` for values set by code), in order.
    key_lines : dict, optional
        Dotted key -> line, for files read without line-aware containers (TOML).
    """

    path: str | None = None
    document: Any = field(default=None, compare=False, repr=False)
    overrides: tuple[tuple[str, str | None], ...] = ()
    key_lines: dict[str, int] | None = field(default=None, compare=False, repr=False)

    def with_overrides(self, items: list[tuple[str, str | None]]) -> ConfigSource:
        """Return this source with more overrides (later ones win).

        Parameters
        ----------
        items : list of (str, str or None)
            Dotted key and how it was given (as in ``overrides``).

        Returns
        -------
        ConfigSource
        """
        return dataclasses.replace(self, overrides=self.overrides + tuple(items))

    def where(self, key: str) -> str | None:
        """Name the place of ``key``: ``file:line``, ``file (--set k=v)``, ``--set k=v``, ``file`` or None.

        Parameters
        ----------
        key : str
            Dotted key with list indices (``models[0].path``).

        Returns
        -------
        str or None
        """
        for given, label in reversed(self.overrides):
            if key == given or key.startswith((given + ".", given + "[")) or given.startswith(key + ".") and key:
                if label is None:
                    return None
                return f"{self.path} ({label})" if self.path else label
        if self.path is None:
            return None
        from diagnostics.core.yaml_lines import LineDict, LineList, line_of

        line = None
        node = self.document
        for index, name in _KEY_PARTS.findall(key):
            step = int(index) if index else name
            if isinstance(node, LineDict) and step in node or isinstance(node, LineList) and isinstance(step, int) \
                    and 0 <= step < len(node):
                line = line_of(node, step)
                node = node[step]
            else:
                break
        if line is None and self.key_lines:
            parts = key.replace("[", ".[").split(".")
            line = next((self.key_lines[".".join(parts[:n])] for n in range(len(parts), 0, -1)
                         if ".".join(parts[:n]) in self.key_lines), None)
        return f"{self.path}:{line}" if line else self.path
