"""``python -m bot``: the same as ``python -m bot.serve`` (serve a bot; ``bot.serve_cli``)."""

import sys

from bot.serve_cli import main

sys.exit(main())
