import sys

from catalog.cli import main

sys.exit(main())
