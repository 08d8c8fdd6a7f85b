"""Every file a run writes besides the terminal: one learner's report, and for a class the
gradebook (and its regrade diff), the per-learner feedback files, the class report and the
reports.

:func:`write` makes a class's files from its typed results, so a batch run (the pytest layer)
and the merge of shards (``python -m pytest_lessons merge``) write exactly the same files;
:func:`write_report` writes one learner's. :func:`check` finds a wrong combination of options
before anything is graded. What to write is an :class:`Outputs`, read from the one option
table (:data:`~pytest_lessons.reports.options.OUTPUT_OPTIONS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.submissions import Roll
from pytest_lessons.reports import (
    classreport,
    feedback_files,
    formats,
    gradebook,
    history,
    registry,
)
from pytest_lessons.reports.classreport import name_list
from pytest_lessons.reports.options import OUTPUT_OPTIONS
from pytest_lessons.reports.tallies import Tally

#: The placeholder of ``--lesson-report`` that a batch run fills with each learner's name.
LEARNER = "{learner}"


class OptionError(ValueError):
    """Options that cannot work together; the message says what to give instead."""


#: The exit status of a run (and of the merge) that graded, but could not write a file it was
#: asked for: none of pytest's own (0 to 6, pytest 9), so a script tells it from failed cases (1).
WRITE_FAILED = 10


class WriteFailed(Exception):
    """Files a run was asked for that could not be written, each with why (*failed*); every
    other file was written (*lines*: what the terminal says about those)."""

    def __init__(self, failed: Sequence[tuple[str, str]], lines: Sequence[str] = ()) -> None:
        super().__init__("; ".join(f"{path}: {why}" for path, why in failed))
        self.failed = list(failed)
        self.lines = list(lines)

    def error_lines(self) -> list[str]:
        """One line a file, for the terminal: which file, why, and what to do."""
        return [
            f"lessons: ERROR: fix the output path, then grade again: {path} could not be "
            f"written ({why}); every other file was written (exit status {WRITE_FAILED})."
            for path, why in self.failed
        ]


@dataclass(frozen=True)
class Outputs:
    """What a class run was asked to write (paths relative to *here* in :func:`write`)."""

    gradebook: str | None = None
    gradebook_format: str = "long"
    roster: str | None = None
    gradebook_diff: str | None = None
    feedback: str | None = None
    class_report: str | None = None
    report: str | None = None
    """The report's path; in a class run it may hold :data:`LEARNER`."""
    report_format: str = "json"
    hidden_visibility: str = "after_published"
    history: str | None = None
    """The history folder a class result is recorded in (:mod:`~pytest_lessons.reports.history`)."""
    never_lower: bool = False
    """Hold each grade at its best recorded in :attr:`history`."""

    @classmethod
    def from_values(cls, get: Callable[[str], Any]) -> Outputs:
        """The outputs a command line asked for: *get* gives each option's value by its field
        name (``report_format``), as pytest's ``getoption`` or argparse's namespace hold it."""
        return cls(**{option.field: get(option.field) for option in OUTPUT_OPTIONS})


def check(outputs: Outputs, here: Path, batch: bool) -> gradebook.Roster | None:
    """Refuse what cannot work, before grading starts; return the roster read."""
    platform = registry.format_named(outputs.report_format).holds == "learner"
    if batch and outputs.report and platform and LEARNER not in outputs.report:
        raise OptionError(
            f"Put {LEARNER} in --lesson-report when grading a class with the "
            f"{outputs.report_format} format, for one report per learner (for example "
            f"--lesson-report=reports/{LEARNER}.json): a {outputs.report_format} report "
            "holds one learner. The json format holds the whole class in one file."
        )
    if not batch:
        for value, option in (
            (outputs.feedback, "--lesson-feedback"),
            (outputs.class_report, "--lesson-class-report"),
            (outputs.roster, "--lesson-roster"),
            (outputs.gradebook_diff, "--lesson-gradebook-diff"),
            (outputs.history, "--lesson-history"),
            (outputs.never_lower, "--lesson-never-lower"),
        ):
            if value:
                raise OptionError(f"Give {option} with --lesson-submissions: it is about a class.")
    if outputs.never_lower and not outputs.history:
        raise OptionError(
            "Give --lesson-history=DIR with --lesson-never-lower: the best grades are those "
            "recorded in that folder."
        )
    if outputs.history:
        try:
            history.read(Path(here, outputs.history))
        except history.HistoryError as error:
            raise OptionError(f"--lesson-history: {error}") from None
    if outputs.gradebook_diff and not outputs.gradebook:
        raise OptionError(
            "Give --lesson-gradebook=PATH with --lesson-gradebook-diff: the changes are written "
            "beside the new gradebook."
        )
    if outputs.gradebook_diff:
        old = Path(here, outputs.gradebook_diff)
        try:
            gradebook.points_of(old.read_text(encoding="utf-8-sig"))
        except OSError as error:
            raise OptionError(f"--lesson-gradebook-diff={old}: {error.strerror}") from None
        except ValueError as error:
            raise OptionError(f"--lesson-gradebook-diff={old}: {error}") from None
    roster = None
    if outputs.roster:
        path = Path(here, outputs.roster)
        try:
            roster = gradebook.Roster.read(path)
        except OSError as error:
            raise OptionError(f"--lesson-roster={path}: {error.strerror}") from None
        except gradebook.RosterError as error:
            raise OptionError(str(error)) from None
    if registry.layout_named(outputs.gradebook_format).needs_roster and roster is None:
        raise OptionError(
            f"Give --lesson-roster=CSV with --lesson-gradebook-format={outputs.gradebook_format}: "
            "it joins each learner's folder to the LMS's identity (docs/ci-grading.md, "
            "'Gradebooks')."
        )
    return roster


def changes_path(book: Path) -> Path:
    """Where the regrade's changes go: beside the gradebook (``grades.changes.csv``)."""
    return book.with_name(f"{book.stem}.changes.csv")


def report_path(template: str, stem: str) -> str:
    """A learner's report path: the template with :data:`LEARNER` filled by the learner's
    file name stem (:func:`~pytest_lessons.reports.feedback_files.stems`: plain characters, nothing
    that leaves the report's folder, never another learner's)."""
    return template.replace(LEARNER, stem)


def write(
    outputs: Outputs,
    results: Sequence[CaseResult],
    seconds: float,
    here: Path,
    roll: Roll | None = None,
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
    tally: Tally | None = None,
) -> list[str]:
    """Write every file *outputs* asks for; return the lines the terminal shows about them.

    *roll* is the class (who is in it, the shard graded): the json report records it, so a
    merge can tell a missing or foreign shard. *order* is the exercises' course order as a
    shard recorded it (empty: from ``course.toml``). *absent* names learners of the class
    with no result (a merge without their shard), each with why: they are written as not
    graded, never left out. *tally* is the class's :class:`Tally` when it is known (a merge
    of the shards' tallies, whose *results* are empty): the gradebook and the class report
    are made from it.

    Each file is written on its own: one that fails (its folder, the disk, a roster that does
    not fit its layout, a fault of ours) stops no other. When any failed, :class:`WriteFailed`
    is raised once all the others are written, with each failed file and why."""
    lines: list[str] = []
    failed: list[tuple[str, str]] = []

    def attempt(path: Path | str, make: Callable[[], None]) -> None:
        try:
            make()
        except Exception as error:  # this file only: the others are still written
            failed.append((str(path), formats.why(error)))

    if roll is not None and roll.skipped:
        lines.append(roll.skipped_line())
    roster = check(outputs, here, batch=True)
    if tally is None:
        tally = Tally.of(results)
    order = tally.order(order)
    absent = dict(absent or {})
    book = gradebook.book_of(tally, roster, order, absent)
    table = None
    unlisted = ""  # why the class's table (its learners' names) could not be made
    if roll is not None:
        try:
            table = roll.table()
        except Exception as error:  # the json report alone needs it: the others are written
            unlisted = formats.why(error)
        if absent and table is not None:
            table["absent"] = {name: absent[name] for name in sorted(absent)}
    # The record keeps what this run graded, before any hold: the best is then always the
    # best that some run gave, never a hold carried forward.
    record = (
        history.record_of(book, formats.full(results, seconds, order, table))
        if outputs.history
        else None
    )
    holds: list[history.Hold] = []
    if outputs.history:
        found = history.read(Path(here, outputs.history))
        lines += [f"history: set aside {name}: {why}" for name, why in found.set_aside]
        if outputs.never_lower:
            holds = history.hold(book, found.records)
            lines += history.hold_lines(holds)
            if table is not None:
                table["held"] = history.hold_table(holds)
    if outputs.gradebook:
        path = Path(here, outputs.gradebook)

        def write_book() -> None:
            try:
                text = registry.render_gradebook(outputs.gradebook_format, book)
            except gradebook.RosterError as error:
                raise OptionError(str(error)) from None
            _write(path, text)
            lines.append(f"gradebook: {path} ({outputs.gradebook_format})")
            lines.extend(gradebook.unmatched_lines(book))

        attempt(path, write_book)
        if outputs.gradebook_diff:
            target = changes_path(path)

            def write_changes() -> None:
                old = Path(here, str(outputs.gradebook_diff)).read_text(encoding="utf-8-sig")
                moved = gradebook.changes(gradebook.points_of(old), book)
                _write(target, gradebook.changes_csv(moved))
                lines.extend([*gradebook.changes_lines(moved), f"regrade changes: {target}"])

            attempt(target, write_changes)
    # What is handed back to a learner names their files as they handed them in (made only
    # for the files handed back: a merge of 100,000 learners need not copy every result).
    theirs = (
        own_files(results, roll) if outputs.feedback or LEARNER in (outputs.report or "") else []
    )
    # Their files' names are the class's (every shard's learners, who a merge lacks too), so
    # a shard, one run and the merge name each learner's files alike.
    names = (
        feedback_files.stems(
            [*(roll.learners if roll else ()), *absent, *(r.learner for r in results)]
        )
        if theirs
        else {}
    )
    if outputs.feedback:
        folder = Path(here, outputs.feedback)

        def write_feedback() -> None:
            lost: list[tuple[Path, str]] = []
            written = feedback_files.write_all(
                folder, theirs, order=order, failed=lost, names=names
            )
            failed.extend((str(p), reason) for p, reason in lost)
            lines.append(f"feedback: {len(written)} files in {folder}")
            if absent:
                lines.append(
                    f"feedback: none for the learners not graded: {name_list(sorted(absent))}"
                )

        attempt(folder, write_feedback)
    if outputs.class_report:
        path = Path(here, outputs.class_report)

        def write_class_report() -> None:
            _write(path, classreport.render_tally(tally, order=order, absent=absent))
            lines.append(f"class report: {path}")

        attempt(path, write_class_report)
    if outputs.report and unlisted:
        failed.append((str(Path(here, outputs.report)), unlisted))
    elif outputs.report:
        options = formats.Options(seconds, outputs.hidden_visibility, tuple(order), table)
        render = registry.format_named(outputs.report_format).render
        if LEARNER in outputs.report:
            learners = sorted({r.learner for r in results})
            # A learner's own report may be handed back: it names no classmate.
            own = replace(options, roll=None)
            for learner in learners:
                mine = [r for r in theirs if r.learner == learner]
                target = Path(here, report_path(outputs.report, names[learner]))
                attempt(target, partial(_render_to, target, render, mine, own))
            lines.append(
                f"reports: {len(learners)} {outputs.report_format} files, "
                f"{Path(here, outputs.report)}"
            )
        else:
            target = Path(here, outputs.report)
            attempt(target, partial(_render_to, target, render, results, options))
    if record is not None:
        folder = Path(here, str(outputs.history))

        def write_history() -> None:
            kept = history.write(folder, record)
            lines.append(f"history: recorded as {kept}")

        attempt(folder, write_history)
    if failed:
        raise WriteFailed(failed, lines)
    return lines


def own_files(results: Sequence[CaseResult], roll: Roll | None) -> list[CaseResult]:
    """*results* with each learner's own folder left out of their texts: ``Create
    split_heads/solution.py`` as the learner handed it in, not the instructor's
    ``submissions/cy/split_heads/solution.py``. A classmate's path (a file the sandbox
    refused) stays whole: it is not the learner's."""
    if roll is None:
        return list(results)
    out = []
    for r in results:
        headline, message = r.headline, r.message
        for sep in ("/", "\\"):
            mine = f"{roll.folder}{sep}{r.learner}{sep}"
            headline, message = headline.replace(mine, ""), message.replace(mine, "")
        out.append(replace(r, headline=headline, message=message))
    return out


def write_report(
    outputs: Outputs, results: Sequence[CaseResult], seconds: float, here: Path
) -> None:
    """One learner's report (a run without ``--lesson-submissions``), if one was asked for;
    :class:`WriteFailed` says why it could not be written."""
    if outputs.report:
        path = Path(here, outputs.report)
        try:
            text = registry.render(
                outputs.report_format, results, seconds, outputs.hidden_visibility
            )
            _write(path, text)
        except Exception as error:
            raise WriteFailed([(str(path), formats.why(error))]) from error


def _render_to(
    path: Path,
    render: Callable[[Sequence[CaseResult], formats.Options], str],
    results: Sequence[CaseResult],
    options: formats.Options,
) -> None:
    _write(path, render(results, options))


def _write(path: Path, text: str) -> None:
    """*text* into *path* (its folders made), as UTF-8 whatever a learner's name holds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(formats.encoded(text))
