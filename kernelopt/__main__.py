"""``python -m kernelopt`` runs the command-line tool."""

import os
import sys

# ``python -m`` puts the working directory first on sys.path. Run inside a log directory,
# that would let the log's own files (an ``attr.py``, a ``numpy.py`` helper) shadow the
# libraries the tool imports, and so run the log's code. The package itself is already
# imported here, and its submodules resolve through its own ``__path__``.
_here = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", ".", _here)]

from kernelopt.cli import main  # noqa: E402 - must follow the sys.path cleanup above

raise SystemExit(main())
