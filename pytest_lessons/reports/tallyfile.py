"""A planned shard's tally: beside its json report, what the merge's gradebook, class report
and terminal lines need of the shard's learners, without any case's texts.

A shard of a plan writes it with ``--lesson-tally=PATH`` (:func:`shard_tally`, :func:`text`);
``python -m pytest_lessons merge --plan=PLAN.json`` takes tallies instead of the json reports
and adds them up (:class:`Adder`) into the class's :class:`~pytest_lessons.reports.tallies.Tally`,
reading one row per learner and exercise instead of every case: 100,000 learners x 5 lessons
x 10 cases are 4.2 GiB of reports and 71 MiB of tallies (benchmarks/merge.py).

The file holds, per learner and exercise, the points, the seconds, whether a file was handed
in, the outcomes of the chart and the title; per case, how many passed; per exercise's case,
the points possible; the class-wide counts; and the shard's ``class`` table (its plan, its
shard). A merge adds learners' figures up in any order, and two orders of adding floats may
differ in the last bit: so a tally is written only when every case's points are multiples of
a power of two (:data:`GRAIN`: 1, 0.5, 0.25 ...), which every order adds up exactly, and the
merge checks that its own sums stay exact. Otherwise the shard writes no tally and says why,
and the merge reads its json report, as it always could.

A tally is read as untrusted as a report is (it is made from learner-shaped data: folder
names, exception names): every field's type and range is checked, and a tally that is not
one is refused, naming the file. This module imports neither pytest nor torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_lessons.core.results import CaseResult, Status
from pytest_lessons.reports.formats import encoded, not_handed_in
from pytest_lessons.reports.tallies import (
    PASSED,
    Bar,
    Group,
    Mark,
    Outcome,
    Tally,
    learner_outcomes,
    sorted_bars,
    totals,
    with_hidden_faults,
)

#: The ``format`` field of a tally file.
FORMAT = "pytest-lessons-tally"
#: The tally file's version: a reader refuses another instead of guessing.
VERSION = 1
#: The finest points a tally holds: multiples of 2**-GRAIN (about a millionth).
GRAIN = 20
#: The scale of the merge's exact sums: each value times 2**GRAIN, as an integer.
_SCALE = float(2**GRAIN)
#: Floats hold every multiple of 2**-g up to 2**(53 - g) exactly.
_MANTISSA = 53


class TallyError(ValueError):
    """A tally that cannot be written or read; the message says why and what to do."""


def grain(values: Sequence[float]) -> int:
    """The smallest g (0 to :data:`GRAIN`) such that every value is a multiple of 2**-g;
    :class:`TallyError` when a value is negative, not finite or finer."""
    found = 0
    for value in set(values):
        if not math.isfinite(value) or value < 0:
            raise TallyError(f"a case's points are {value!r}")
        g = 0
        while not (value * 2.0**g).is_integer():
            g += 1
            if g > GRAIN:
                raise TallyError(
                    f"a case's points ({value!r}) are not a multiple of 2**-{GRAIN}, so the "
                    "shards' sums could differ in the last digit from one run's"
                )
        found = max(found, g)
    return found


def shard_tally(
    results: Sequence[CaseResult],
    seconds: float,
    order: Sequence[str],
    table: dict[str, Any],
) -> dict[str, Any]:
    """A shard's tally, from its results as its json report holds them (in that order, so
    each learner's figures add up as a merge of the reports adds them); its ``class``
    *table* as the report's. :class:`TallyError` when the results cannot be tallied exactly:
    points finer than :data:`GRAIN`, an exercise with two ``exercise.toml`` paths, a case
    graded twice."""
    fine = grain([v for r in results for v in (r.points, r.max_points)])
    fixed = with_hidden_faults(results)
    slug_path: dict[str, str] = {}
    path_slug: dict[str, str] = {}
    seen: set[tuple[str, str, int]] = set()
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    mine: dict[tuple[str, str], list[CaseResult]] = {}
    maxima: dict[tuple[str, int, str], float] = {}
    cases: dict[tuple[str, int], list[Any]] = {}
    for r in fixed:
        if slug_path.setdefault(r.exercise, r.path) != r.path or (
            path_slug.setdefault(r.path, r.exercise) != r.exercise
        ):
            raise TallyError(f"exercise {r.exercise} has results of two exercise.toml files")
        key = (r.learner, r.path, r.case)
        if key in seen:
            raise TallyError(f"{r.learner}'s {r.exercise} {r.label} was graded twice")
        seen.add(key)
        row = rows.get((r.learner, r.exercise))
        if row is None:
            row = rows[(r.learner, r.exercise)] = {
                "points": 0.0,
                "max": 0.0,
                "seconds": 0.0,
                "handed": False,
                "first": r,
            }
            mine[(r.learner, r.exercise)] = []
        row["points"] = row["points"] + r.points
        row["max"] = row["max"] + r.max_points
        row["seconds"] = row["seconds"] + r.seconds
        row["handed"] = row["handed"] or not not_handed_in(r)
        if r.case < row["first"].case:
            row["first"] = r
        mine[(r.learner, r.exercise)].append(r)
        case = (r.exercise, r.case, r.id)
        maxima[case] = max(maxima.get(case, 0.0), r.max_points)
        if r.status != Status.BROKEN:
            count = cases.setdefault((r.path, r.case), [0, 0, r.learner, r.label])
            count[0] += r.passed
            count[1] += 1
            if r.learner < count[2]:
                count[2], count[3] = r.learner, r.label
    outcomes: dict[Outcome, int] = {}
    out_rows = []
    for (learner, exercise), row in rows.items():
        shown = learner_outcomes(sorted(mine[(learner, exercise)], key=lambda r: r.case))
        first = row["first"]
        out_rows.append(
            [
                learner,
                exercise,
                first.path,
                first.title,
                row["points"],
                row["max"],
                row["seconds"],
                row["handed"],
                [outcomes.setdefault(o, len(outcomes)) for o in shown],
            ]
        )
    counts = totals(results)
    del counts["points"], counts["max_points"]
    counts["cases"] = len(results)
    counts["passed"] = sum(r.passed for r in results)
    return {
        "format": FORMAT,
        "version": VERSION,
        "class": table,
        "seconds": seconds,
        "exercises": list(order),
        "grain": fine,
        "counts": counts,
        "outcomes": [[o.key, o.label, o.kind] for o in outcomes],
        "maxima": [[e, c, i, most] for (e, c, i), most in maxima.items()],
        "cases": [[p, c, *count] for (p, c), count in cases.items()],
        "rows": out_rows,
    }


def text(tally: dict[str, Any]) -> bytes:
    """A tally as its file holds it: one row a line, UTF-8 as a report is
    (:func:`~pytest_lessons.reports.formats.encoded`)."""
    head = {k: v for k, v in tally.items() if k != "rows"}
    rows = ",\n".join(json.dumps(row, ensure_ascii=False) for row in tally["rows"])
    body = json.dumps(head, ensure_ascii=False)[:-1]
    return encoded(f'{body}, "rows": [\n{rows}\n]}}\n')


def is_tally(data: object) -> bool:
    """Whether *data* (a file's JSON) is a tally rather than a report."""
    return isinstance(data, dict) and data.get("format") == FORMAT


@dataclass
class _Group:
    """A group being added up: its figures, the first learner's slug and title."""

    first: tuple[str, str, str]
    learners: int = 0
    points: int = 0
    max_points: int = 0
    passed: list[str] = field(default_factory=list)
    shown: dict[str, tuple[Outcome, list[str], tuple[str, int]]] = field(default_factory=dict)
    """Outcome key -> the outcome, its learners, and where one run's chart first met it (its
    first learner, and its place among that learner's outcomes): bars of as many learners
    and the same label stay in that order."""
    cases: dict[int, list[Any]] = field(default_factory=dict)


@dataclass
class Adder:
    """The class's :class:`Tally`, added up from the shards' tallies one at a time
    (:meth:`add`, after the merge checked the shard), then :meth:`tally`."""

    marks: dict[tuple[str, str], Mark] = field(default_factory=dict)
    learners: set[str] = field(default_factory=set)
    paths: dict[str, str] = field(default_factory=dict)
    maxima: dict[tuple[str, int, str], float] = field(default_factory=dict)
    exercises: dict[str, None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    broken: set[str] = field(default_factory=set)
    groups: dict[str, _Group] = field(default_factory=dict)
    points: int = 0
    max_points: int = 0
    fine: int = 0

    def add(self, rows: Sequence[Row], data: dict[str, Any]) -> None:
        """One shard's tally: its *rows* (:func:`rows`) and the rest of its *data*."""
        self.fine = max(self.fine, data["grain"])
        for name in ("cases", "passed", "public", "public_passed", "hidden", "hidden_passed"):
            self.counts[name] = self.counts.get(name, 0) + data["counts"][name]
        self.broken.update(data["counts"]["broken"])
        for exercise, case, id_, most in data["maxima"]:
            key = (exercise, case, id_)
            self.maxima[key] = max(self.maxima.get(key, 0.0), most)
        outcomes = [Outcome(*o) for o in data["outcomes"]]
        marks, groups, paths = self.marks, self.groups, self.paths
        for row in rows:
            learner, exercise, path = row.learner, row.exercise, row.path
            self.learners.add(learner)
            self.exercises.setdefault(exercise)
            marks[(learner, exercise)] = Mark(row.points, row.handed, row.seconds)
            if exercise not in paths or path < paths[exercise]:
                paths[exercise] = path
            points, most = _exact(row.points), _exact(row.max_points)
            self.points += points
            self.max_points += most
            group = groups.get(path)
            if group is None:
                group = groups[path] = _Group((learner, exercise, row.title))
            elif learner < group.first[0]:
                group.first = (learner, exercise, row.title)
            group.learners += 1
            group.points += points
            group.max_points += most
            if not row.outcomes:
                group.passed.append(learner)
            for place, n in enumerate(row.outcomes):
                outcome = outcomes[n]
                bar = group.shown.get(outcome.key)
                if bar is None:
                    group.shown[outcome.key] = (outcome, [learner], (learner, place))
                else:
                    bar[1].append(learner)
                    if (learner, place) < bar[2]:
                        group.shown[outcome.key] = (bar[0], bar[1], (learner, place))
        for path, case, passed, total, first, label in data["cases"]:
            group = groups.get(path)
            if group is None:
                continue  # a case of no learner's row: checked against the rows when read
            count = group.cases.get(case)
            if count is None:
                group.cases[case] = [passed, total, first, label]
            else:
                count[0] += passed
                count[1] += total
                if first < count[2]:
                    count[2], count[3] = first, label

    def tally(self) -> Tally:
        """The class's tally; :class:`TallyError` when its sums would not be exact."""
        limit = 2 ** (_MANTISSA - self.fine + GRAIN)
        if self.points >= limit or self.max_points >= limit:
            raise TallyError(
                "the class's points are too many to add up exactly at their finest "
                f"(multiples of 2**-{self.fine}): merge the shards' json reports instead"
            )
        maximum = dict.fromkeys(self.exercises, 0.0)
        for (exercise, _, _), most in self.maxima.items():
            maximum[exercise] = maximum.get(exercise, 0.0) + most
        groups = {}
        for path, adding in self.groups.items():
            _, slug, title = adding.first
            group = Group(path, slug, title or slug, adding.learners)
            group.points = adding.points / 2**GRAIN
            group.max_points = adding.max_points / 2**GRAIN
            bars = [Bar(PASSED, sorted(adding.passed))] if adding.passed else []
            met = sorted(adding.shown.values(), key=lambda bar: bar[2])
            bars += [Bar(outcome, sorted(who)) for outcome, who, _ in met]
            group.bars = sorted_bars(bars)
            group.cases = sorted(
                (passed / total, case, label, passed, total)
                for case, (passed, total, _, label) in adding.cases.items()
            )
            groups[path] = group
        counts = self.counts
        return Tally(
            learners=sorted(self.learners),
            marks=self.marks,
            maximum=maximum,
            paths=self.paths,
            totals={
                "points": round(self.points / 2**GRAIN, 6),
                "max_points": round(self.max_points / 2**GRAIN, 6),
                "public_passed": counts.get("public_passed", 0),
                "public": counts.get("public", 0),
                "hidden_passed": counts.get("hidden_passed", 0),
                "hidden": counts.get("hidden", 0),
                "broken": sorted(self.broken),
            },
            groups=groups,
            cases=counts.get("cases", 0),
            passed=counts.get("passed", 0),
        )


def _exact(value: float) -> int:
    """*value* times 2**GRAIN, exactly (it was checked to be a multiple of 2**-grain)."""
    return int(value * _SCALE)


@dataclass(frozen=True)
class Row:
    """One learner's one exercise, as a tally holds it (checked by :func:`rows`)."""

    learner: str
    exercise: str
    path: str
    title: str
    points: float
    max_points: float
    seconds: float
    handed: bool
    outcomes: tuple[int, ...]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _on_grain(value: object, fine: int) -> bool:
    return (
        _number(value)
        and math.isfinite(float(value))  # type: ignore[arg-type]
        and float(value) >= 0  # type: ignore[arg-type]
        and (float(value) * 2.0**fine).is_integer()  # type: ignore[arg-type]
    )


def rows(data: dict[str, Any], where: str) -> list[Row]:
    """The rows of a tally's *data* (a file's JSON), every field checked, and the rest of
    *data* checked too; :class:`TallyError` (naming *where*) when any is not what a shard
    writes."""

    def wrong(what: str) -> TallyError:
        return TallyError(
            f"{where} is not a tally pytest-lessons can read ({what}): grade the shard again, "
            "or merge the shard's json report instead"
        )

    if data.get("version") != VERSION:
        raise wrong(f"version {data.get('version')!r}, and this pytest-lessons reads {VERSION}")
    fine = data.get("grain")
    if not isinstance(fine, int) or isinstance(fine, bool) or not 0 <= fine <= GRAIN:
        raise wrong("its grain")
    counts = data.get("counts")
    names = ("cases", "passed", "public", "public_passed", "hidden", "hidden_passed")
    if not isinstance(counts, dict) or not all(
        isinstance(counts.get(n), int) and not isinstance(counts.get(n), bool) and counts[n] >= 0
        for n in names
    ):
        raise wrong("its counts")
    broken = counts.get("broken")
    if not isinstance(broken, list) or not all(isinstance(b, str) for b in broken):
        raise wrong("its broken exercises")
    if not _number(data.get("seconds", 0.0)) or not isinstance(data.get("exercises", []), list):
        raise wrong("its seconds or exercises")
    if not all(isinstance(e, str) for e in data.get("exercises", [])):
        raise wrong("its exercises")
    outcomes = data.get("outcomes")
    if not isinstance(outcomes, list) or not all(
        isinstance(o, list) and len(o) == 3 and all(isinstance(x, str) for x in o) for o in outcomes
    ):
        raise wrong("its outcomes")
    maxima = data.get("maxima")
    if not isinstance(maxima, list) or not all(
        isinstance(m, list)
        and len(m) == 4
        and isinstance(m[0], str)
        and isinstance(m[1], int)
        and isinstance(m[2], str)
        and _on_grain(m[3], fine)
        for m in maxima
    ):
        raise wrong("its points possible")
    raw = data.get("rows")
    if not isinstance(raw, list):
        raise wrong("its rows")
    out: list[Row] = []
    seen: set[tuple[str, str]] = set()
    paths: set[str] = set()
    for row in raw:
        if not (
            isinstance(row, list)
            and len(row) == 9
            and all(isinstance(x, str) for x in row[:4])
            and _on_grain(row[4], fine)
            and _on_grain(row[5], fine)
            and _number(row[6])
            and math.isfinite(row[6])
            and isinstance(row[7], bool)
            and isinstance(row[8], list)
            and all(
                isinstance(n, int) and not isinstance(n, bool) and 0 <= n < len(outcomes)
                for n in row[8]
            )
        ):
            raise wrong(f"row {len(out) + 1}")
        learner, exercise, path, title, points, most, spent, handed, shown = row
        one = Row(learner, exercise, path, title, points, most, spent, handed, tuple(shown))
        if (one.learner, one.exercise) in seen:
            raise wrong(f"{one.learner}'s {one.exercise} twice")
        seen.add((one.learner, one.exercise))
        paths.add(one.path)
        out.append(one)
    cases = data.get("cases")
    if not isinstance(cases, list) or not all(
        isinstance(c, list)
        and len(c) == 6
        and c[0] in paths
        and isinstance(c[1], int)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in c[2:4])
        and 0 <= c[2] <= c[3]
        and c[3] > 0
        and isinstance(c[4], str)
        and isinstance(c[5], str)
        for c in cases
    ):
        raise wrong("its cases")
    return out


def write_beside(report: Path, target: Path) -> str:
    """Write the tally of the shard's json *report* (as the merge reads it, so the two agree
    to the last bit) to *target*; return the terminal's line about it. A report no tally can
    hold exactly (:class:`TallyError`) gets none, and an older tally at *target* is removed,
    so a merge never adds up a tally of another grading: it reads the report instead."""
    data = json.loads(report.read_bytes().decode("utf-8"))
    results = [CaseResult.from_dict(raw) for raw in data["results"]]
    try:
        tally = shard_tally(
            results, float(data.get("seconds", 0.0)), data.get("exercises", []), data["class"]
        )
    except TallyError as error:
        target.unlink(missing_ok=True)
        return f"tally: none written ({error}): the merge reads this shard's report instead"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text(tally))
    return f"tally: {target}"
