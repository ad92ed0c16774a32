"""The pieces of ``models.py``, one concept per module.

Import from ``models``: it re-exports the public names of every module here, and
those names are the stable API.
"""
