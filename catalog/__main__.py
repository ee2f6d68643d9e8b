"""``python -m catalog``: the command line (``catalog.cli``). The process ends with the command, so
what the command made is frozen first (``gc.freeze``): the collector's last pass at exit walks none
of it (after a ranking, some hundred thousand objects in the planner's caches: that pass was 4% of
the command's work), and it is freed as the interpreter exits, as before."""

import gc
import sys

from catalog.cli import main

code = main()
gc.freeze()
sys.exit(code)
