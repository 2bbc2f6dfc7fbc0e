"""The foundation every stage shares: definitions with one home each, importing no stage.

What belongs here: the labels and predictions-table columns (``schema``), the diagnostic taxonomy (``taxonomy``),
the one table reader and writer (``tables``), atomic file writes (``io_utils``), checks of the files a command
writes or reads back (``file_checks``), the line-aware YAML loader (``yaml_lines``), the resource folders
(``resources``), content hashes (``hashing``), the code version (``version``), the error types for input a user can
fix (``errors``) and the lazy exports of the stage packages (``lazy``). A module here imports only the standard
library, third-party packages and other modules of ``diagnostics.core``; the settings system, the other half of the
foundation, is ``diagnostics.settings``. Import the modules themselves (``from diagnostics.core.schema import
LABELS``): this package exports nothing.
"""

__all__: list[str] = []  # the modules are the public names
