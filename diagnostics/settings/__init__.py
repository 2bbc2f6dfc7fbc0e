"""One settings system: settings classes whose fields carry type, choices, check and help; one converter; one parser
of settings as written; one description for people.

* :class:`Settings` and :func:`setting` declare a settings class (:class:`~diagnostics.finetune.SweepConfig`, the
  pipeline's :class:`~diagnostics.pipeline.ScaleSpec`, and the nested :class:`~diagnostics.finetune.ExtraData`,
  :class:`~diagnostics.finetune.Presence`, :class:`~diagnostics.finetune.ModelSpec`): building one converts and
  checks every field, then the class's own :meth:`Settings.problems`, and raises one :class:`ConfigError` naming
  each problem with the file and line of its key, or the override that set it (:class:`ConfigSource`). A field
  declares its nature too (in the run hash or not, derived, per run, one recipe's option: :data:`NATURES`), and
  :func:`fields_declaring` and :func:`unset_values` list the fields of each, for the code that hashes, groups and
  checks settings.
* :func:`split_override`, :func:`apply_overrides` and :func:`read_settings` read ``--set key=value`` overrides and
  YAML / TOML config files, for the sweep config, the pipeline's scale settings and its inputs alike.
* :func:`describe_settings` lists the fields with their help, for ``diagnostics settings`` and ``docs/settings.md``.
"""

from ._docs import describe_settings
from ._errors import ConfigError, ConfigSource
from ._fields import NATURES, Expected, Settings, field_types, fields_declaring, setting, unset_values
from ._input import apply_overrides, override_items, override_key, read_settings, split_override, split_pair
from ._values import Bad, as_list, check_keys, choice, hint, read_mapping, read_string, show

__all__ = ["NATURES", "Bad", "ConfigError", "ConfigSource", "Expected", "Settings", "apply_overrides", "as_list",
           "check_keys", "choice", "describe_settings", "field_types", "fields_declaring", "hint", "override_items",
           "override_key", "read_mapping", "read_settings", "read_string", "setting", "show", "split_override",
           "split_pair", "unset_values"]
