"""Example bots, each in its own module, to play against and to learn from.

* ``RandomBot``: uniformly random legal stones, reproducible with a seed.
* ``CenterBot``: the prototype's bot, the legal cells nearest the origin (written
  against the prototype's ``choose_move`` API).
* ``ThreatBot``: wins when it can, blocks immediate threats, otherwise extends its
  longest open line (the fast ``play`` API on ``game.rules.Position``).
* ``LatticeBot``: never makes a line, so games last to the turn limit: the trivial
  opponent for load tests and benchmarks.

>>> from bot.bots import CenterBot, RandomBot, ThreatBot
>>> [bot.capabilities().meta.name for bot in (RandomBot, CenterBot, ThreatBot)]
['RandomBot', 'CenterBot', 'ThreatBot']
"""

from bot.bots.center_bot import CenterBot
from bot.bots.lattice_bot import LatticeBot
from bot.bots.random_bot import RandomBot
from bot.bots.threat_bot import ThreatBot

__all__ = ["CenterBot", "LatticeBot", "RandomBot", "ThreatBot"]
