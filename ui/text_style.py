"""Secondary text: a bot's details, the connection state, hints, the server's address,
a provisional rating in the leaderboard.

It is set apart from the main text by a lighter colour that must stay easy to read. Qt's
``palette(dark)``, which these labels used, is a shade for bevels and shadows, not for
text: under the Fusion style it is #9f9f9f on a #efefef window, a contrast of 2.3:1,
where text needs at least 4.5:1 (WCAG AA). ``secondary_text_color`` mixes the palette's
text colour into its window colour instead, so it follows a light or a dark palette.
"""

from __future__ import annotations

from PyQt5.QtGui import QColor, QGuiApplication, QPalette

__all__ = ["contrast_ratio", "secondary_text_color", "secondary_text_style"]

#: How much of the text colour secondary text keeps (the rest is the window colour):
#: 4.5:1 and more against the window, black or white text alike.
SECONDARY_TEXT_SHARE = 0.62


def secondary_text_color(palette: QPalette | None = None, *, in_view: bool = False) -> QColor:
    """The colour of secondary text in ``palette`` (default: the application's): on the
    window, or with ``in_view`` in the cells of a list or table, which are drawn in the
    palette's text colour on its base (white under a light palette, not the window's
    grey).

    >>> light = QPalette()
    >>> light.setColor(QPalette.ColorRole.WindowText, QColor("black"))
    >>> light.setColor(QPalette.ColorRole.Window, QColor("#efefef"))
    >>> secondary_text_color(light).name()
    '#5b5b5b'
    >>> light.setColor(QPalette.ColorRole.Text, QColor("black"))
    >>> light.setColor(QPalette.ColorRole.Base, QColor("white"))
    >>> secondary_text_color(light, in_view=True).name()
    '#616161'
    """
    palette = palette if palette is not None else QGuiApplication.palette()
    role = QPalette.ColorRole
    text = palette.color(role.Text if in_view else role.WindowText)
    window = palette.color(role.Base if in_view else role.Window)
    share = SECONDARY_TEXT_SHARE

    def mix(a: int, b: int) -> int:
        return round(a * share + b * (1 - share))

    return QColor(
        mix(text.red(), window.red()),
        mix(text.green(), window.green()),
        mix(text.blue(), window.blue()),
    )


def secondary_text_style(palette: QPalette | None = None) -> str:
    """A style sheet giving a label the secondary text colour (``secondary_text_color``)."""
    return f"color: {secondary_text_color(palette).name()};"


def contrast_ratio(one: QColor, other: QColor) -> float:
    """WCAG's contrast ratio of two colours: 1 (the same) to 21 (black on white).

    >>> round(contrast_ratio(QColor("#9f9f9f"), QColor("#efefef")), 1)
    2.3
    """

    def luminance(color: QColor) -> float:
        def linear(channel: int) -> float:
            value = channel / 255
            return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

        red, green, blue = (linear(c) for c in (color.red(), color.green(), color.blue()))
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    lighter, darker = sorted((luminance(one), luminance(other)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
