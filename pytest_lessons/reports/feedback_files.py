"""Per-learner feedback files of a class, ready to hand back: ``DIR/<learner>.md``.

Each file holds the learner's points per exercise and in total, each failing case's headline
(cases failing for one reason are listed together, explained once), each watch-out's whole
explanation once, and the first hint of each exercise not passed yet. Hidden cases are listed
with their points and their (already safe) headline, never their inputs, answers or output.

Made from typed results only (:class:`~pytest_lessons.core.results.CaseResult`), plus the lessons'
hints when the exercise files can be read, so a merge of shards writes the same files as one
run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_lessons.core import model
from pytest_lessons.core.results import FAULT, WATCH_OUT, CaseResult, Status
from pytest_lessons.core.submissions import digested, file_stem, stem_group
from pytest_lessons.core.words import case_list
from pytest_lessons.reports.formats import encoded, markdown, not_handed_in, why
from pytest_lessons.reports.gradebook import number
from pytest_lessons.reports.tallies import exercise_order, with_hidden_faults

#: A hint as the file shows it: (title, text).
Hint = tuple[str, str]


def escape(text: str) -> str:
    """*text* shown as itself in Markdown, on one line: no HTML, link, autolink, code span,
    emphasis or block starts in it, and nothing invisible is in it
    (:func:`~pytest_lessons.reports.formats.markdown`).

    Headlines can quote a learner's exception message and folder names are the learner's
    choice; an LMS or a forge that renders the file must not run or link what they wrote."""
    return markdown(text)


def hints_of(results: Sequence[CaseResult]) -> dict[str, list[Hint]]:
    """Each exercise file's hints, read from the lesson (none where it cannot be read, as in
    a merge run on a machine without the course)."""
    found: dict[str, list[Hint]] = {}
    for path in sorted({r.path for r in results}):
        try:
            exercise = model.load(Path(path))
        except (model.ExerciseError, OSError):
            found[path] = []
            continue
        found[path] = [(h.title, h.text.strip()) for h in exercise.hints]
    return found


def _cases(results: Sequence[CaseResult]) -> str:
    """``case 3``, ``cases 1, 4``, ``cases 5 to 10``, hidden cases named as such."""
    return case_list(
        [r.case for r in results if not r.hidden], [r.case for r in results if r.hidden]
    )


def _points(earned: float, most: float) -> str:
    return f"{number(earned)} of {number(most)} point{'' if most == 1 else 's'}"


def _key(r: CaseResult) -> tuple[str, str]:
    """Cases that fail for one reason share a key: a watch-out, a fault no input changes, or
    else the headline, so cases told the same words are listed once."""
    reason = r.reason
    if reason is not None and reason[0] in (WATCH_OUT, FAULT):
        return reason
    return ("headline", r.headline)


def exercise_section(results: Sequence[CaseResult], hints: Sequence[Hint]) -> list[str]:
    """One exercise of one learner, as Markdown lines."""
    ordered = sorted(results, key=lambda r: r.case)
    first = ordered[0]
    earned = sum(r.points for r in ordered)
    most = sum(r.max_points for r in ordered)
    lines = [f"## {escape(first.title or first.exercise)} ({escape(first.exercise)})", ""]
    if first.status == Status.BROKEN:
        return [
            *lines,
            "Not graded: the lesson's exercise.toml is broken (the course's fault, not yours).",
            "",
        ]
    if all(not_handed_in(r) for r in ordered):
        return [
            *lines,
            f"**{_points(0, most)}**: nothing was handed in for this exercise.",
            "",
            escape(first.headline),
            "",
        ]
    passed = [r for r in ordered if r.passed]
    failing = [r for r in ordered if not r.passed]
    lines += [
        f"**{_points(earned, most)}**: {len(passed)} of {len(ordered)} cases passed.",
        "",
    ]
    if not failing:
        return [*lines, "Every case passed.", ""]
    groups: dict[tuple[str, str], list[CaseResult]] = {}
    for r in failing:
        groups.setdefault(_key(r), []).append(r)
    explained: list[tuple[str, str]] = []
    lines += ["What to fix:", ""]
    for (kind, _), members in groups.items():
        earned = sum(r.points for r in members)
        most = sum(r.max_points for r in members)
        where = f"{_cases(members)} ({_points(earned, most)})"
        headline = members[0].headline
        if kind == "watch_out":
            name = members[0].diagnosis or ""
            shown = f"watch out: {escape(name)} (explained below)"
            explained.append((name, headline))
        else:
            shown = escape(headline)
        lines.append(f"- {where}: {shown}")
    lines.append("")
    for name, headline in explained:
        text = headline.removeprefix("Watch out: ")
        lines += [f"### Watch out: {escape(name)}", "", escape(text[:1].upper() + text[1:]), ""]
    if hints:
        title, text = hints[0]
        lines += [f"### Hint: {escape(title)}", "", markdown(text, lines=True), ""]
    return lines


def feedback(
    learner: str,
    results: Sequence[CaseResult],
    hints: Mapping[str, Sequence[Hint]],
    order: Sequence[str] = (),
) -> str:
    """The Markdown file for *learner*, from their results (one learner's only), the
    exercises in their course's order (*order* as a shard recorded it, else
    ``course.toml``'s)."""
    mine = with_hidden_faults([r for r in results if r.learner == learner])
    rank = {slug: n for n, slug in enumerate(exercise_order(mine, order))}
    by_path: dict[str, list[CaseResult]] = {}
    for r in sorted(mine, key=lambda r: (rank[r.exercise], r.path, r.case)):
        by_path.setdefault(r.path, []).append(r)
    earned = sum(r.points for r in mine)
    most = sum(r.max_points for r in mine)
    lines = [f"# Feedback for {escape(learner)}" if learner else "# Feedback", ""]
    lines += [f"**{_points(earned, most)}** in all.", ""]
    lines += ["| exercise | points |", "| --- | --- |"]
    for rs in by_path.values():
        name = escape(rs[0].exercise)  # a | is escaped too: it would end the cell
        lines.append(
            f"| {name} | {number(sum(r.points for r in rs))} of "
            f"{number(sum(r.max_points for r in rs))} |"
        )
    lines.append("")
    for path, rs in by_path.items():
        lines += exercise_section(rs, hints.get(path, ()))
    return "\n".join(lines).rstrip("\n") + "\n"


def file_name(learner: str) -> str:
    """The learner's file in the feedback folder, whoever else is in the class: their folder
    name made a plain, bounded file name (:func:`~pytest_lessons.core.submissions.file_stem`)."""
    return f"{file_stem(learner)}.md"


def stems(learners: Iterable[str]) -> dict[str, str]:
    """Each learner's file name without its suffix, in name order, for a class of *learners*
    (the whole class, every shard's: a shard names its files as one run does).

    :func:`~pytest_lessons.core.submissions.file_stem`'s, which no two folder names share;
    where two differ only in case (``Jo``, ``jo``: one file on macOS and Windows), the first
    in name order keeps it and each other one ends in ``-`` and its folder name's digest, so
    no learner's file overwrites another's on any file system."""
    found: dict[str, str] = {}
    kept: set[str] = set()
    for learner in sorted(set(learners)):
        stem = file_stem(learner)
        group = stem_group(learner)
        if group in kept:
            stem = digested(stem, learner)
        kept.add(group)
        found[learner] = stem
    return found


def write_all(
    folder: Path,
    results: Sequence[CaseResult],
    hints: Mapping[str, Sequence[Hint]] | None = None,
    order: Sequence[str] = (),
    failed: list[tuple[Path, str]] | None = None,
    names: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write one file per learner into *folder* (made if needed); return the files written.
    *names* gives each learner's file name stem (:func:`stems` of the whole class); without,
    those of the learners of *results*.

    With *failed*, a file that cannot be written (the disk, its name, its text) is added
    there with why, and the other learners' files are still written; without, it raises."""
    folder.mkdir(parents=True, exist_ok=True)
    hints = hints_of(results) if hints is None else hints
    order = exercise_order(results, order)  # once for the class, not once a learner
    written = []
    learners = sorted({r.learner for r in results})
    names = stems(learners) if names is None else names
    for learner in learners:
        stem = names[learner] if learner in names else digested(file_stem(learner), learner)
        path = folder / f"{stem}.md"
        try:
            path.write_bytes(encoded(feedback(learner, results, hints, order)))
        except Exception as error:  # one learner's file: the others are still written
            if failed is None:
                raise
            failed.append((path, why(error)))
            continue
        written.append(path)
    return written
