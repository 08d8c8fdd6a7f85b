"""The one boundary for learner text: every string that comes back from the process running
learner code (a message, an error type, a frame's file, function and code, a name, a died or
setup message, a detail, printed output, an answer's type names) passes :func:`learner_text`
before the core, and so any report, sees it.

It makes the text plain, whatever the learner put in it: lone surrogates (``"\\ud800"``, which
no UTF-8 file can hold) become U+FFFD; terminal escape sequences, control characters (``\\n``
and ``\\t`` kept where a text has lines), the C1 controls, bidirectional overrides and other
invisible format characters are removed; the length is bounded. The result is the same
whatever the text passed before: cleaning it again changes nothing.

:class:`~pytest_lessons.isolation.outcome.Outcome` calls it on each of its text fields as it
is made, so no outcome, however a runner built it, holds learner text that was not cleaned;
:func:`~pytest_lessons.isolation.answers.valid_answer` cleans an answer's type names as it reads
them. The reports then escape for their media (Markdown, HTML, XML, the terminal): text that is
plain is not yet text that is safe in every format.

:func:`visible` is for the writers: it shows what :func:`learner_text` would remove (in a
folder name, which no child sent) as escapes a reader can see, ``\\x1b``, and never as the
character itself.
"""

from __future__ import annotations

import re
from typing import Any

#: Bounds of each kind of text, in characters (as the child cuts them: a longer one was not
#: written by the child).
MESSAGE = 4000
"""An exception's message, a setup or died message."""
NAME = 200
"""An exception's class name, a function's name, a name the learner's file defines."""
PATH = 1000
"""A frame's file, a line of its code, a detail (a path the sandbox refused)."""
OUTPUT = 1 << 24
"""Printed output: the runner caps it in bytes (``--lesson-output-cap``); this bounds it once
more, far above any cap a run sets."""
WORD = 50
"""A word the runner reads itself (a signal's name, a phase)."""

#: How deep the details of an outcome may nest, and how many items a list of them keeps.
DETAIL_DEPTH = 6
DETAIL_ITEMS = 1000

# An escape sequence: CSI (colours, cursor moves, clearing the screen), OSC (the window's
# title, hyperlinks) up to its terminator or the end, and the two-character ones; the C1
# control CSI (U+009B) with its parameters.
_ESCAPES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~])?"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_SURROGATES = re.compile(r"[\ud800-\udfff]")
# Removed everywhere: C0 controls but tab and newline, DEL, C1 controls, the two
# non-characters, and every format character (Unicode's Cf, as of Unicode 15.1): the
# bidirectional marks, embeddings, overrides and isolates (they reorder what an instructor
# reads), the zero-width space, joiners and word joiner, the soft hyphen, the invisible
# operators, the byte order mark, the interlinear annotations and the tag characters, with
# which a learner hides text in a line that reads as another (a red team's round G).
_INVISIBLE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891"
    "\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\ufffe\uffff\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_REMOVED = re.compile(f"[{_INVISIBLE}]")


def learner_text(text: object, limit: int = MESSAGE, lines: bool = True) -> str:
    """*text* made plain (see the module's docstring), at most *limit* characters (a longer
    one is cut and ends with ``…``). With *lines*, tabs and newlines stay (a carriage return
    becomes a newline); without, each becomes a space. Anything but a string is no text: "".
    """
    if not isinstance(text, str):
        return ""
    # The common case, in C: every character printable (what is cleaned never is: controls,
    # format characters, separators, surrogates), tabs and newlines aside where lines stay.
    probe = text.replace("\n", "").replace("\t", "") if lines else text
    if len(text) <= limit and probe.isprintable():
        return text
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n")
    text = _SURROGATES.sub("\ufffd", text)
    text = _REMOVED.sub("", text)
    if not lines:
        text = text.replace("\n", " ").replace("\t", " ")
    if len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


def all_plain(one_line: list[str], with_lines: list[str]) -> bool:
    """Whether :func:`learner_text` would leave each of these texts as it is (the bounds
    aside, which the caller checks): *one_line* without, *with_lines* with their lines kept.
    One scan of them all, for an outcome that is made again from texts already cleaned."""
    try:
        lined = "".join(with_lines).replace("\n", "").replace("\t", "")
        return ("".join(one_line) + lined).isprintable()
    except TypeError:  # a text that is no string: the slow path says ""
        return False


def learner_data(value: Any, limit: int = PATH, depth: int = 0) -> Any:
    """*value* (JSON-like data: an outcome's details) with every string in it, keys too, made
    plain on one line (:func:`learner_text`); nested at most :data:`DETAIL_DEPTH` levels (what
    is deeper is dropped) and :data:`DETAIL_ITEMS` items a list. Numbers, booleans and None
    stay as they are."""
    if isinstance(value, str):
        return learner_text(value, limit, lines=False)
    if depth >= DETAIL_DEPTH:
        return None
    if isinstance(value, dict):
        return {
            learner_text(k, NAME, lines=False) if isinstance(k, str) else k: learner_data(
                v, limit, depth + 1
            )
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        items = [learner_data(v, limit, depth + 1) for v in value[:DETAIL_ITEMS]]
        return items if isinstance(value, list) else tuple(items)
    return value


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


#: Characters Python counts as printable that show as nothing, or as a blank: Unicode's
#: default-ignorable code points outside the format characters (the Hangul fillers, the
#: combining grapheme joiner, the Khmer inherent vowels, the variation selectors) and the
#: blank Braille pattern. A folder named ``\u3164`` reads as no name at all; ``good\u034f``
#: reads as ``good`` (a red team's round G).
BLANK = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0"
    + "".join(map(chr, range(0x180B, 0x1810)))
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)


def _shown(char: str, tabs: bool) -> bool:
    return (char.isprintable() and char not in BLANK) or (tabs and char == "\t")


def visible(text: str, tabs: bool = False) -> str:
    """*text* on one line, each character Python does not count as printable shown as an
    escape a reader sees (``\\x1b``, ``\\x0a``, ``\\u200b``, ``\\ud800``): what
    :func:`learner_text` removes, and also tabs, newlines, the separators, zero-width and
    other invisible format characters, every space but the plain one (a no-break space
    reads as one) and the printable characters that show as a blank (:data:`BLANK`). For
    the writers, whose own text (a learner's folder name) no child sent: a terminal, an HTML
    page or an XML file then shows what is there, and runs none of it; two names that differ
    by an invisible character do not look alike. With *tabs*, a tab stays
    one (a terminal's line of code)."""
    if (text.replace("\t", "") if tabs else text).isprintable() and BLANK.isdisjoint(text):
        return text
    return "".join(char if _shown(char, tabs) else _escaped(char) for char in text)


def visible_name(text: str) -> str:
    """:func:`visible` for a name that must stay one-to-one with what it names (a learner's
    folder in a node id): a backslash is doubled first, so a folder literally named ``a\\x1b``
    is never shown as the folder ``a`` + ESC is, and cannot take its node id or its verdicts."""
    shown = visible(text.replace("\\", "\\\\"))
    # A space at either end is invisible on a page: ``good `` would read as ``good``.
    core = shown.strip(" ")
    if core == shown:
        return shown
    if not core:
        return "\\x20" * len(shown)
    start = len(shown) - len(shown.lstrip(" "))
    end = len(shown) - len(shown.rstrip(" "))
    return "\\x20" * start + core + "\\x20" * end
