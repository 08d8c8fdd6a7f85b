"""Everything a class run writes besides the terminal: the gradebook (and its regrade diff),
the per-learner feedback files, the class report and the per-learner reports.

One function, :func:`write`, makes them from the class's typed results, so a batch run (the
pytest layer) and the merge of shards (``python -m pytest_lessons merge``) write exactly the
same files. :func:`check` finds a wrong combination of options before anything is graded.
This module imports neither pytest nor torch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_lessons.core.results import CaseResult
from pytest_lessons.core.words import noun, plural
from pytest_lessons.reports import classreport, feedback_files, formats, gradebook

#: The placeholder of ``--lesson-report`` that a batch run fills with each learner's name.
LEARNER = "{learner}"

#: Report formats that hold one learner's results: a batch run writes one file per learner.
PLATFORM_FORMATS = ("gradescope", "classroom", "exercism")


class OptionError(ValueError):
    """Options that cannot work together; the message says what to give instead."""


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


def check(outputs: Outputs, here: Path, batch: bool) -> gradebook.Roster | None:
    """Refuse what cannot work, before grading starts; return the roster read."""
    platform = outputs.report_format in PLATFORM_FORMATS
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
        ):
            if value:
                raise OptionError(f"Give {option} with --lesson-submissions: it is about a class.")
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
    if outputs.gradebook_format in ("canvas", "moodle") and roster is None:
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
) -> list[str]:
    """Write every file *outputs* asks for; return the lines the terminal shows about them.

    *roll* is the class (who is in it, the shard graded): the json report records it, so a
    merge can tell a missing or foreign shard. *order* is the exercises' course order as a
    shard recorded it (empty: from ``course.toml``). *absent* names learners of the class
    with no result (a merge without their shard), each with why: they are written as not
    graded, never left out."""
    lines: list[str] = []
    if roll is not None and roll.skipped:
        lines.append(roll.skipped_line())
    roster = check(outputs, here, batch=True)
    order = formats.exercise_order(results, order)
    absent = dict(absent or {})
    book = gradebook.build(results, roster, order, absent)
    if outputs.gradebook:
        path = Path(here, outputs.gradebook)
        try:
            text = gradebook.render(outputs.gradebook_format, book)
        except gradebook.RosterError as error:
            raise OptionError(str(error)) from None
        _write(path, text)
        lines.append(f"gradebook: {path} ({outputs.gradebook_format})")
        lines += gradebook.unmatched_lines(book)
        if outputs.gradebook_diff:
            old = Path(here, outputs.gradebook_diff).read_text(encoding="utf-8-sig")
            moved = gradebook.changes(gradebook.points_of(old), book)
            target = changes_path(path)
            _write(target, gradebook.changes_csv(moved))
            lines += [*gradebook.changes_lines(moved), f"regrade changes: {target}"]
    # What is handed back to a learner names their files as they handed them in.
    theirs = own_files(results, roll)
    if outputs.feedback:
        folder = Path(here, outputs.feedback)
        written = feedback_files.write_all(folder, theirs, order=order)
        lines.append(f"feedback: {len(written)} files in {folder}")
        if absent:
            lines.append(f"feedback: none for the learners not graded: {name_list(sorted(absent))}")
    if outputs.class_report:
        path = Path(here, outputs.class_report)
        _write(path, classreport.render(results, order=order, absent=absent))
        lines.append(f"class report: {path}")
    if outputs.report:
        table = None
        if roll is not None:
            table = roll.table()
            if absent:
                table["absent"] = {name: absent[name] for name in sorted(absent)}
        options = formats.Options(seconds, outputs.hidden_visibility, tuple(order), table)
        render = formats.FORMATS[outputs.report_format]
        if LEARNER in outputs.report:
            learners = feedback_files.stems(r.learner for r in results)
            # A learner's own report may be handed back: it names no classmate.
            own = replace(options, roll=None)
            for learner, stem in learners.items():
                mine = [r for r in theirs if r.learner == learner]
                _write(Path(here, report_path(outputs.report, stem)), render(mine, own))
            lines.append(
                f"reports: {len(learners)} {outputs.report_format} files, "
                f"{Path(here, outputs.report)}"
            )
        else:
            _write(Path(here, outputs.report), render(results, options))
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


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- the terminal of a class run ------------------------------------------------------------


def class_lines(
    results: Sequence[CaseResult],
    order: Sequence[str] = (),
    absent: Mapping[str, str] | None = None,
) -> list[str]:
    """The class at a glance: per exercise, who passed, the mean, and how many learners show
    each outcome (every kind: watch-outs, findings, timeouts, crashes, missing ...).
    Exercises come in their course's order, as in the ``lessons`` section of a learner's run.
    Learners *absent* from the results (a merge without their shard) are named first."""
    learners = len({r.learner for r in results})
    lines = [plural(learners, "learner")]
    if absent:
        lines[0] += f" graded of {len(absent) + learners}"
    for why, names in _by_reason(absent or {}).items():
        lines.append(f"NOT GRADED: {plural(len(names), 'learner')}, {why}: {name_list(names)}")
    by_exercise: dict[str, list[CaseResult]] = {}
    for r in sorted(results, key=lambda r: (r.path, r.learner, r.case)):
        by_exercise.setdefault(r.exercise, []).append(r)
    for exercise in formats.exercise_order(results, order):
        rs = by_exercise[exercise]
        bars = classreport.exercise_bars(rs)
        passed = next((len(b.learners) for b in bars if b.outcome.key == "passed"), 0)
        mean = sum(r.points for r in rs) / learners
        most = sum(r.max_points for r in rs) / learners
        lines.append(
            f"{exercise}: {passed} of {learners} passed, mean {mean:.3g} of {most:g} points"
        )
        for bar in bars:
            if bar.outcome.key != "passed":
                count = len(bar.learners)
                lines.append(f"    {count:>3} {noun(count, 'learner')}  {bar.outcome.label}")
    return lines


def _by_reason(absent: Mapping[str, str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in sorted(absent):
        found.setdefault(absent[name], []).append(name)
    return found


def name_list(names: Sequence[str], most: int = 10) -> str:
    """``a, b, c`` or ``a, b ... and 12 more``: enough to find them, never a wall of names."""
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most} more"


def progress_line(done: int, total: int, learners_done: int, learners: int, elapsed: float) -> str:
    """``learners 12/40 done, cases 130/400, 0:42 elapsed, about 1:30 left``."""
    left = elapsed * (total - done) / done if done else 0.0
    text = (
        f"learners {learners_done}/{learners} done, cases {done}/{total}, {_clock(elapsed)} elapsed"
    )
    return text + (f", about {_clock(left)} left" if done < total and done else "")


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d}"


# --- the class and its shards ---------------------------------------------------------------

#: Folders of a submissions folder that are never a learner, and why: version control, the
#: caches of Python and of its tools, and what macOS adds to a zip. Every other folder is a
#: learner, whatever its name (``_jane``, ``.x``); a file is never a learner.
NOT_LEARNERS = {
    ".git": "version control",
    ".hg": "version control",
    ".svn": "version control",
    ".bzr": "version control",
    "__pycache__": "Python's cache",
    ".pytest_cache": "pytest's cache",
    ".mypy_cache": "mypy's cache",
    ".ruff_cache": "ruff's cache",
    ".ipynb_checkpoints": "Jupyter's checkpoints",
    "__MACOSX": "macOS's zip metadata",
}


@dataclass(frozen=True)
class Roll:
    """A class: every learner folder of its submissions folder (of every shard), the shard a
    run grades, and what the folder held that is not a learner."""

    learners: tuple[str, ...]
    shard: tuple[int, int] = (1, 1)
    skipped: tuple[tuple[str, str], ...] = ()
    """(name, why) of each entry of the submissions folder taken for no learner."""
    folder: str = "submissions"
    """The submissions folder as the terminal names it."""

    @classmethod
    def of(cls, submissions: Path, shard: tuple[int, int] | None = None, shown: str = "") -> Roll:
        """The class in *submissions*: each folder a learner except :data:`NOT_LEARNERS`."""
        learners: list[str] = []
        skipped: list[tuple[str, str]] = []
        for entry in sorted(submissions.iterdir(), key=lambda e: e.name):
            if not entry.is_dir():
                skipped.append((entry.name, "a file"))
            elif entry.name in NOT_LEARNERS:
                skipped.append((entry.name, NOT_LEARNERS[entry.name]))
            else:
                learners.append(entry.name)
        return cls(tuple(learners), shard or (1, 1), tuple(skipped), shown or str(submissions))

    @property
    def id(self) -> str:
        """A short fingerprint of the class's learners: shards of one class share it."""
        return hashlib.sha256("\n".join(sorted(self.learners)).encode("utf-8")).hexdigest()[:16]

    def members(self, k: int | None = None) -> list[str]:
        """The learners of shard *k* (default: this roll's shard), in name order."""
        number, total = self.shard
        k = number if k is None else k
        return [who for who in self.learners if total == 1 or shard_of(who, total) == k]

    def table(self) -> dict[str, Any]:
        """The ``class`` table of the json report."""
        k, n = self.shard
        return {
            "id": self.id,
            "shard": f"{k}/{n}",
            "learners": list(self.learners),
            "folder": self.folder,
        }

    def skipped_line(self) -> str:
        shown = ", ".join(f"{name} ({why})" for name, why in self.skipped)
        return f"skipped in {self.folder}, not learners: {shown}"


# --- shards ---------------------------------------------------------------------------------


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N), 1 <= K <= N."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise OptionError(f"--lesson-shard={text}: give K/N, such as 1/3") from None
    if not 1 <= k <= n:
        raise OptionError(f"--lesson-shard={text}: K must be from 1 to N, such as 1/{max(n, 1)}")
    return k, n


def shard_of(learner: str, shards: int) -> int:
    """The shard (from 1) that grades *learner*: a hash of the name alone, so a learner always
    lands in the same shard and a new learner moves no one else."""
    digest = hashlib.sha256(learner.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards + 1
