"""Similar submissions, as plain data for the terminal and the class report.

Made by ``python -m pytest_lessons similarity`` (:mod:`pytest_lessons.similarity`), which
fingerprints each learner's file with copydetect, the lesson's starter left out. A pair is
evidence to look at, never a grade and never a verdict: short exercises have few ways to be
right, and two learners who each wrote the one obvious line look alike. Nothing here changes a
point anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_lessons.core.words import plural

#: What every view of the pairs says first.
EVIDENCE = (
    "Pairs of submissions whose code overlaps, ranked per lesson: evidence to look at, "
    "never a grade. Short lessons have few ways to be right, so similar code is often "
    "honest; read both files before concluding anything. The lesson's starter is left out."
)


@dataclass(frozen=True)
class Pair:
    """Two learners' files of one lesson that overlap."""

    first: str
    second: str
    first_share: float
    """The part of *first*'s code (its tokens, after the starter) also in *second*'s."""
    second_share: float
    tokens: int
    """How many tokens overlap."""

    @property
    def score(self) -> float:
        """What pairs are ranked by: the larger share (one file copied into a longer one
        still ranks high)."""
        return max(self.first_share, self.second_share)


@dataclass
class Lesson:
    """The pairs of one lesson, best first."""

    lesson: str
    pairs: list[Pair] = field(default_factory=list)
    compared: int = 0
    """How many learners' files were compared."""
    left_out: dict[str, list[str]] = field(default_factory=dict)
    """Why -> the learners whose file was not compared (none, a link, too large ...)."""


def _percent(share: float) -> str:
    return f"{round(100 * share)}%"


def lines(lessons: Sequence[Lesson], shown: int = 10) -> list[str]:
    """The pairs for the terminal, *shown* per lesson at most."""
    out = [EVIDENCE]
    for lesson in lessons:
        head = f"{lesson.lesson}: {plural(lesson.compared, 'file')} compared"
        if lesson.left_out:
            head += "; not compared: " + "; ".join(
                f"{plural(len(who), 'learner')} ({why})" for why, who in lesson.left_out.items()
            )
        out.append(head)
        if not lesson.pairs:
            out.append("  no pair above the threshold")
        for pair in lesson.pairs[:shown]:
            out.append(
                f"  {_percent(pair.score):>4}  {pair.first} and {pair.second}: "
                f"{_percent(pair.first_share)} of {pair.first}'s code is in {pair.second}'s, "
                f"{_percent(pair.second_share)} of {pair.second}'s in {pair.first}'s "
                f"({plural(pair.tokens, 'token')})"
            )
        if len(lesson.pairs) > shown:
            out.append(f"  ... and {len(lesson.pairs) - shown} more pairs")
    return out
