"""The output options, declared once: pytest's ``--lesson-NAME`` options and the merge
command's ``--NAME`` options are both made from :data:`OUTPUT_OPTIONS`, so they cannot drift
(they had: ``--hidden-visibility`` had another help and metavar in each).

A row's help names other options by their pytest spelling (``--lesson-roster``);
:meth:`Option.help_in` respells them for the merge command. A ``class_only`` row's help says,
in pytest's words, that it needs ``--lesson-submissions``; the merge is always about a class.
To add an output option: a row here, the field of
:class:`~pytest_lessons.reports.outputs.Outputs` it fills, and its use in ``outputs``. This
module imports neither pytest nor torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_lessons.reports.registry import FORMATS, LAYOUTS, names

#: How pytest spells an output option: ``--lesson-`` and the row's name.
PYTEST = "--lesson-"

#: How the merge command spells it: ``--`` and the row's name.
MERGE = "--"


@dataclass(frozen=True)
class Option:
    """One output option: a field of :class:`~pytest_lessons.reports.outputs.Outputs`."""

    name: str
    """``report-format``: ``--lesson-report-format`` for pytest, ``--report-format`` for the
    merge, and the field ``report_format``."""
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    default: str | bool | None = None
    class_only: bool = False
    """Whether it is about a class (pytest refuses it without ``--lesson-submissions``)."""
    switch: bool = False
    """An option without a value (``--lesson-never-lower``): given or not."""

    @property
    def field(self) -> str:
        """The option's field of ``Outputs`` (and the merge's argparse ``dest``)."""
        return self.name.replace("-", "_")

    def flag(self, spelling: str) -> str:
        """The option on a command line spelt with *spelling* (:data:`PYTEST` or
        :data:`MERGE`)."""
        return spelling + self.name

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of argparse's (and pytest's) ``add_argument`` besides the
        flag, its ``dest`` and its help."""
        if self.switch:
            return {"action": "store_true", "default": self.default}
        return {"metavar": self.metavar, "choices": self.choices, "default": self.default}

    def help_in(self, spelling: str) -> str:
        """The help as the command spelt with *spelling* shows it."""
        text = self.help
        if self.class_only and spelling == PYTEST:
            text = f"With {PYTEST}submissions: {text[0].lower()}{text[1:]}"
        return text.replace(PYTEST, spelling)


def _listed(phrases: list[str], last: str = "or") -> str:
    return ", ".join(phrases[:-1]) + f" {last} " + phrases[-1]


_ONE_LEARNER = [f.name for f in FORMATS if f.holds == "learner"]
_ROSTERED = [layout.name for layout in LAYOUTS if layout.needs_roster]

#: Every output option, in ``--help``'s order.
OUTPUT_OPTIONS: tuple[Option, ...] = (
    Option(
        "report",
        "Write the grading report to PATH (always, also when cases crash or an exercise file is "
        "broken). Grading a class, {learner} in PATH writes one report per learner (required "
        f"for the {_listed(_ONE_LEARNER, 'and')} formats); json without it "
        "holds the whole class.",
        metavar="PATH",
    ),
    Option(
        "report-format",
        f"The report's dialect: {_listed([f.help for f in FORMATS])}.",
        choices=names(FORMATS),
        default="json",
    ),
    Option(
        "hidden-visibility",
        "Gradescope's visibility of hidden cases (default after_published).",
        choices=("hidden", "after_due_date", "after_published", "visible"),
        default="after_published",
    ),
    Option(
        "gradebook",
        "Write the gradebook CSV to PATH (none unless asked).",
        metavar="PATH",
        class_only=True,
    ),
    Option(
        "gradebook-format",
        f"The gradebook's layout: {_listed([layout.help for layout in LAYOUTS])}; "
        f"{_listed(_ROSTERED, 'and')} need {PYTEST}roster.",
        choices=names(LAYOUTS),
        default="long",
    ),
    Option(
        "roster",
        "A CSV with a 'learner' column (each learner's folder) and the LMS's identity columns; "
        "the gradebook joins on it and lists what did not match.",
        metavar="CSV",
    ),
    Option(
        "gradebook-diff",
        "After a regrade: show and write (beside the gradebook, NAME.changes.csv) each learner "
        "whose points moved since the long or wide gradebook OLD.csv.",
        metavar="OLD.csv",
    ),
    Option(
        "feedback",
        "Write DIR/<learner>.md, each learner's feedback.",
        metavar="DIR",
        class_only=True,
    ),
    Option(
        "class-report",
        "Write the class report, one self-contained HTML file.",
        metavar="PATH",
        class_only=True,
    ),
    Option(
        "history",
        "Keep this class result in DIR: a new file named by its content, never one rewritten "
        "(python -m pytest_lessons history DIR lists each learner's grades over the runs).",
        metavar="DIR",
        class_only=True,
    ),
    Option(
        "never-lower",
        f"With {PYTEST}history: a regrade never lowers a learner's points on an exercise "
        "below the best recorded in DIR; each grade so held is named in the gradebook's note, "
        "the terminal and the json report.",
        default=False,
        class_only=True,
        switch=True,
    ),
)
