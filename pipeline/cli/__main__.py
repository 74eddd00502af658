"""`python -m pipeline.cli`: the `saksi` command without Ray's subcommands."""
import sys

from .main import main

sys.exit(main())
