"""How ``--help`` shows options: an on/off flag as a plain flag, without a ``<bool>`` type.

Typer's rich help prints every option's type beside it, flags (``--force``, ``--help``) included, where a flag
takes no value: :func:`plain_flags` leaves the type column of a flag empty, as the plain (non-rich) help already does.
"""

from __future__ import annotations

from typer.core import TyperOption

_PLAIN = "_diagnostics_plain_flags"


def plain_flags() -> None:
    """Show no type for on/off flags in the rich ``--help`` of every command (idempotent).

    Options that take a value keep their type (``<int>``, ``<path>`` ...); a counting flag keeps its own.
    """
    if getattr(TyperOption, _PLAIN, False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        if self.is_flag and not self.count:
            return None
        return shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich
    setattr(TyperOption, _PLAIN, True)
