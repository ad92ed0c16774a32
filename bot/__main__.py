"""``python -m bot``: the same as ``python -m bot.serve`` (serve a bot)."""

import sys

from bot.serve import main

sys.exit(main())
