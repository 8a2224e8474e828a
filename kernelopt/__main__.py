"""``python -m kernelopt`` runs the command-line tool."""

from kernelopt.cli import main

raise SystemExit(main())
