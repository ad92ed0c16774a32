"""``python -m ui``: the desktop client (same as ``python -m ui.app``)."""

import sys

from ui.app import main

sys.exit(main())
