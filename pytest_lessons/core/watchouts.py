"""The lesson's watch-outs matched to a wrong answer: :class:`WatchOuts`.

A ``[[watch_out]]`` names a mistake; its mistake function (the lesson's ``mistakes.py``) makes
it. A learner's wrong answer is explained by a watch-out when the mistake function gives the
same answer on the same inputs, and on the exercise's other failing cases too (one degenerate
case alone must not name a mistake). A watch-out with ``fit`` has a free parameter: its value
is found among the author's named values, else by a search (:func:`fit.golden_section`).

Every piece of code runs through :class:`~pytest_lessons.core.runs.Runs`; the words and the
choice among several diagnoses are :mod:`~pytest_lessons.core.detectors`'s.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_lessons.core import behaviour, detectors, fit, model
from pytest_lessons.core.attempt import Attempt, sizes
from pytest_lessons.core.compare import Numbers
from pytest_lessons.core.detectors import Diagnosis, Evidence
from pytest_lessons.core.judge import judge, same_answer, same_values
from pytest_lessons.core.kinds import same_type
from pytest_lessons.core.runs import Runs
from pytest_lessons.isolation.outcome import RETURNED, Outcome

#: The kind of a diagnosis that is a check of the lesson's harness (a ``LessonFailure``).
CHECK = "check"

#: Steps of the search for a fitted parameter (each runs the mistake function once).
FIT_STEPS = 16

#: Characters of the graded file a watch-out's ``code`` is looked for in.
SOURCE_LIMIT = 1_000_000


@dataclass
class WatchOuts:
    """Matches the lesson's watch-outs to wrong answers, running code through *runs*."""

    runs: Runs
    fit_failed: set[tuple[str, str, str]] = field(default_factory=set)
    """(exercise file, learner, watch-out) whose search for a fitted value found nothing."""
    explained: dict[tuple[Any, ...], bool] = field(default_factory=dict)
    """Whether a watch-out (with a fitted value) does not contradict the answer of the file
    graded last on one case: :meth:`consistent`'s per-case answer, kept for the file's other
    cases."""
    explained_for: tuple[str, str, str] = ("", "", "")
    """(file, exercise file, learner) that :attr:`explained` holds answers for."""

    def match(self, attempt: Attempt, evidence: Evidence) -> Diagnosis | None:
        """The lesson's ``[[watch_out]]`` entry that explains the learner's answer, if any."""
        # A watch-out of a harness's check without words of its own fires on that check alone
        # (see :meth:`check`); with words, on its mistake's answers too.
        watch_outs = tuple(w for w in attempt.exercise.watch_outs if w.message)
        if not watch_outs:
            return None
        answers = {
            w.id: self.runs.mistake_answer(attempt, w, evidence.part_index)
            for w in watch_outs
            if w.mistake and w.fit is None and self.code_fits(attempt, w)
        }
        generic = detectors.detect(evidence) if any(w.detector for w in watch_outs) else None
        return detectors.match_watch_outs(
            evidence,
            watch_outs,
            answers,
            generic,
            fitter=lambda watch: self.fitted(attempt, watch, evidence),
            consistent=lambda watch, found: self.consistent(attempt, watch, found),
            fits=lambda watch: self.code_fits(attempt, watch),
        )

    def exact(self, attempt: Attempt, expected: Any, answer: Any) -> Diagnosis | None:
        """The watch-out whose mistake gives the learner's *answer* on the attempt's case, for
        a kind that offers no numbers to the detectors (token ids, text, a mapping), or an
        answer of the wrong type (a tensor for a list, floats for ints): the two answers are
        matched by :func:`alike`, and, as for numbers, the mistake must be wrong here and
        explain the other cases. The learner is told the watch-out first, then the type to
        return."""
        exercise, case = attempt.exercise, attempt.case
        found: list[tuple[model.WatchOut, bool]] = []
        for watch in exercise.watch_outs:
            if not watch.mistake or watch.fit is not None or not watch.message:
                continue
            if not self.code_fits(attempt, watch):
                continue
            mistake = self.runs.mistake_raw(attempt, watch, case)
            if mistake is None:
                continue
            try:
                if judge(exercise, expected, mistake, case.rtol, case.atol).passed:
                    continue
                if not alike(exercise, mistake, answer, case.rtol, case.atol):
                    continue
            except Exception:  # a mistake's answer not of the kind tells nothing
                continue
            found.append((watch, same_type(mistake, answer)))
        # A mistake that gives the learner's very type comes first: values alone cannot tell
        # an eye of floats from an eye of booleans.
        for watch, _ in sorted(found, key=lambda pair: not pair[1]):
            if self.consistent(attempt, watch, None):
                return Diagnosis(
                    watch.id, f"Watch out: {watch.message}", detectors.WATCH_OUT, kind="watch_out"
                )
        return None

    def check(self, attempt: Attempt, outcome: Outcome) -> Diagnosis | None:
        """The diagnosis of a case a check of the lesson's harness failed (its author's words
        for the learner): the watch-out that names the check (``check = "..."``), else the
        check itself (kind ``check``, its id the harness's or one made from its words). None
        for any other outcome. The harness's words stay under a watch-out's headline."""
        found = behaviour.check_id(outcome)
        if found is None:
            return None
        for watch in attempt.exercise.watch_outs:
            if watch.check == found and self.code_fits(attempt, watch):
                if not watch.message:  # the harness's words, which may hold the case's values
                    headline = outcome.message.strip()
                    return Diagnosis(
                        watch.id, headline, detectors.WATCH_OUT, shows_values=True, kind="watch_out"
                    )
                return Diagnosis(
                    watch.id,
                    f"Watch out: {watch.message}",
                    detectors.WATCH_OUT,
                    details=(outcome.message.strip(),),
                    kind="watch_out",
                )
        return Diagnosis(found, outcome.message.strip(), detectors.WATCH_OUT, kind=CHECK)

    def code_fits(self, attempt: Attempt, watch: model.WatchOut) -> bool:
        """Whether the graded file's source matches *watch*'s ``code`` (True without one).

        Only text is read, never run; at worst a learner's file could make a watch-out's
        words fire or not, which changes no verdict and no point."""
        if watch.code is None:
            return True
        try:
            with open(attempt.solution, encoding="utf-8", errors="replace") as source:
                text = source.read(SOURCE_LIMIT)
        except OSError:
            return False
        return re.search(watch.code, text) is not None

    def fitted(
        self, attempt: Attempt, watch: model.WatchOut, evidence: Evidence
    ) -> detectors.Fitted | None:
        """The value of *watch*'s free parameter that gives the learner's answer on the
        attempt's case, within its bounds: the author's named values first, then a search."""
        assert watch.fit is not None
        axes = sizes(attempt.exercise, attempt.case.inputs)
        low, high = watch.fit
        right_value = fit.evaluate(watch.right, axes) if watch.right else None
        right = ""
        if watch.right and right_value is not None:
            right = f"{fit.symbolic(watch.right)} = {fit.fmt(right_value)}"
        got, want = evidence.got, evidence.expected
        rtol, atol = evidence.rtol, evidence.atol

        def answer(value: float) -> Numbers | None:
            return self.runs.mistake_answer(attempt, watch, evidence.part_index, value)

        def is_right(value: float) -> bool:
            return right_value is not None and math.isclose(value, right_value, rel_tol=1e-6)

        def explains(value: float) -> bool:
            mine = answer(value)
            return (
                mine is not None
                and not detectors.close(mine, want, rtol, atol)
                and detectors.close(got, mine, rtol, atol)
            )

        for expression, label in watch.named:
            value = fit.evaluate(expression, axes)
            if value is None or not low <= value <= high or is_right(value):
                continue
            if explains(value):
                words = fit.fmt(value)
                shown = fit.numeric(expression, axes)
                if shown != words:
                    words += f" = {shown}"
                found = detectors.Fitted(value, f"{words}, {label}", right, expression)
                # Two expressions may give the same value on this case (√(2·2) = 2): the one
                # that explains the other cases too is the learner's.
                if self.consistent(attempt, watch, found):
                    return found
        searched = (*attempt.mine, watch.id)
        if (
            searched in self.fit_failed
            or got.shape != want.shape
            or not all(math.isfinite(v) for v in got.flat)
        ):
            return None
        # One search that finds nothing is enough: the same code makes the same mistake on
        # every case, and each search runs the mistake function a dozen times or more.
        self.fit_failed.add(searched)

        def gap(value: float) -> float:
            mine = answer(value)
            if mine is None or mine.shape != got.shape:
                return math.inf
            return max((abs(a - b) for a, b in zip(mine.flat, got.flat)), default=0.0)

        best = fit.golden_section(gap, low, high, FIT_STEPS)
        # The roundest value that gives the learner's answer: a learner writes 8, not 7.9983.
        # Rounding may step over a bound (95.99 to 100 under fit = [0.1, 96]): such a value
        # is not one the author allows.
        for value in dict.fromkeys(float(f"{best:.{n}g}") for n in (1, 2, 3, 4)):
            if low <= value <= high and not is_right(value) and explains(value):
                break
        else:
            return None
        found = detectors.Fitted(value, fit.fmt(value), right)
        if not self.consistent(attempt, watch, found):
            return None
        self.fit_failed.discard(searched)
        return found

    def consistent(
        self, attempt: Attempt, watch: model.WatchOut, found: detectors.Fitted | None
    ) -> bool:
        """Whether *watch* explains every other failing case where its mistake differs from the
        right answer (a degenerate case alone must not name a mistake). Cases whose code did
        not return an answer tell nothing and are left out."""
        if attempt.case.hidden or self.runs.any_timed_out(attempt):
            return True
        # Each other case is checked once per file, watch-out and fitted value, not once for
        # every failing case that asks: a class's mistakes repeat on every case, and the check
        # judges two answers a case. Kept for one file at a time, as the outcomes are.
        here = (str(attempt.solution), str(attempt.exercise.path), attempt.learner)
        if self.explained_for != here:
            self.explained.clear()
            self.explained_for = here
        for case in attempt.exercise.cases:
            if case.number == attempt.case.number:
                continue
            key = (
                attempt.entry,
                attempt.argument,
                watch.id,
                case.number,
                None if found is None else (found.value, found.expression),
            )
            agrees = self.explained.get(key)
            if agrees is None:
                agrees = self.explained[key] = self._explains(attempt.on(case), watch, found)
            if not agrees:
                return False
        return True

    def _explains(
        self, attempt: Attempt, watch: model.WatchOut, found: detectors.Fitted | None
    ) -> bool:
        """Whether *watch* does not contradict the learner's answer on *attempt*'s case: true
        unless both answers are wrong there and differ (see :meth:`consistent`)."""
        exercise, case = attempt.exercise, attempt.case
        if case.draws is not None:
            return True  # a statistical case's counts are matched by statistical.watch_out
        if case.hidden:
            # Its code runs after every public case (see the plugin's order): run here, it
            # would run before some, whose code could print what it saw of it.
            return True
        expected = case.expected
        if case.from_reference:
            expected = self.runs.reference_answer(exercise, case.inputs)
        if expected is None and (case.from_reference or case.source == "snapshot"):
            return True  # no answer to compare with: the reference failed, or no snapshot
        outcome = self.runs.learner_outcome(attempt)
        if outcome.kind != RETURNED:
            return True
        rtol, atol = case.rtol, case.atol
        try:
            if judge(exercise, expected, outcome.answer, rtol, atol).passed:
                return True
            value = None
            if found is not None:
                value = found.value
                if found.expression:
                    value = fit.evaluate(found.expression, sizes(exercise, case.inputs))
            mistake = self.runs.mistake_raw(attempt, watch, case, value)
            if mistake is None or judge(exercise, expected, mistake, rtol, atol).passed:
                return True
            return alike(exercise, mistake, outcome.answer, rtol, atol)
        except Exception:  # an answer that is not numbers tells nothing here
            return True


def alike(exercise: model.Exercise, mistake: Any, answer: Any, rtol: float, atol: float) -> bool:
    """Whether the learner's *answer* is the *mistake*'s: the same by the kind's own
    :meth:`~pytest_lessons.core.kinds.Kind.same`, or, for an answer of another type, the same
    values (:func:`~pytest_lessons.core.judge.same_values`). A learner who returns a tensor
    where a list is expected makes the mistake all the same, and is told both."""
    try:
        if same_answer(exercise, mistake, answer, rtol, atol):
            return True
    except Exception:  # an answer not of the kind: its values may still be the mistake's
        pass
    return same_values(exercise, mistake, answer, rtol, atol)
