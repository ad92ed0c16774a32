"""The README's "Layout" names every module of the packages, and only modules that are
there: a module added, renamed or removed shows up here."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The packages whose modules the layout names, and the files that count as modules.
PACKAGES = {
    "game": "*.py",
    "game/store": "*.py",
    "game/webpage": "*.js",
    "bot": "*.py",
    "ui": "*.py",
    "wire": "*.py",
    "bench": "*.py",
    "tools": "*.py",
}


def layout() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Layout") :]
    return section[: section.index("\n## ")] if "\n## " in section else section


def named_modules() -> tuple[set[str], list[str]]:
    """The words of the layout, and its patterns (``session_*.py``)."""
    text = layout()
    patterns = [word.removesuffix(".py") for word in re.findall(r"[\w]+\*[\w.]*", text)]
    words = {word.removesuffix(".py").removesuffix(".js") for word in re.findall(r"[\w.]+", text)}
    return {word.rsplit("/", 1)[-1] for word in words}, patterns


@pytest.mark.parametrize("package", PACKAGES)
def test_the_layout_names_every_module_of(package: str) -> None:
    words, patterns = named_modules()
    modules = {
        path.stem
        for path in (ROOT / package).glob(PACKAGES[package])
        if path.stem not in ("__init__", "__main__")
    }
    if package == "bench":  # each script is described under "Benchmarks" instead
        modules &= {"processes", "games"}
    missing = {
        module
        for module in modules
        if module not in words and not any(fnmatch.fnmatch(module, p) for p in patterns)
    }
    assert sorted(missing) == []
