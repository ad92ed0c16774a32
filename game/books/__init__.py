"""Data shipped with the game package: the default opening book, ``openings.htttx``."""
