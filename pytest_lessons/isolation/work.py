"""Counting the work a call does, inside the process that runs it: the child's side of a
lesson's work budget (the verdict is :mod:`pytest_lessons.core.efficiency`'s).

A job that asks for it (its request's ``work``) has three figures counted for its call:

``flops``
    floating-point operations, as :class:`torch.utils.flop_counter.FlopCounterMode` scores
    them (its formulas, ``flop_registry``: matrix products, convolutions, attention; an
    elementwise operation scores 0);
``elements``
    for every torch operation that is not a view, the elements of its tensor inputs and
    outputs, added up: what broadcasting code does (``x[:, None] - x[None, :]`` touches
    n + n + n² elements), which FLOP counting scores at 0;
``operations``
    how many such torch operations ran: a Python loop over a tensor runs one per element.

With ``also`` (a growth budget) the same function is called again on those inputs (smaller
ones) and counted the same way, so both figures come from one process.

The counter is one torch dispatch mode, pushed before the sandbox closes and before learner
code loads, so a learner's module cannot replace the classes it is made from. It is a
:class:`torch.utils._python_dispatch.TorchDispatchMode`: the module is
semi-private, but it is what ``FlopCounterMode`` itself is built on, and the public
:class:`torch.overrides.TorchFunctionMode` sees the Python API before dispatch, where a view
(``x[:, None]``, ``expand``) cannot be told from an operation that computes, and the
operations a composite runs inside C++ are not seen at all.

What this cannot promise: learner code runs in the same process, so it can pop the modes off
torch's stack, change the counts, write the result's figures itself, or do its work outside
torch (plain Python lists), which no torch counter sees. A budget is a check of honest code's
efficiency, not a security boundary; the sandbox and the runner's time limit are what hold
against hostile code. No count made outside this process replaces it: the runner could read
the child's CPU time from the kernel, which the child cannot forge, but that is a time, not
the operations a budget bounds, and on a budget case's small inputs mostly the child's own
start. So the threat table (docs/ci-grading.md) lists budgets as not stopped, and a run that
must hold against forged figures counts budget cases as feedback worth no points
(``--lesson-work-budgets=feedback``: :func:`pytest_lessons.core.budget.worth`). What the
runner does check is that the figures are ones a count could give (:func:`believable`).

This module imports torch only when a job asks for counting (the lesson then uses torch).
"""

from __future__ import annotations

from typing import Any, Callable

#: The figures a count gives, in the order they are reported.
MEASURES = ("flops", "elements", "operations")
#: The largest figure believed (a count past it is not one the child could have made).
MAX_FIGURE = 1 << 62
#: How deep the lesson's harness is in :func:`pytest_lessons.harness.uncounted` blocks (its
#: own set-up, which no answer's work should include): the count pauses while it is above 0.
PAUSED = [0]


class Counter:
    """The dispatch mode that counts, from :func:`start` to :func:`stop`; :meth:`call` reads
    it around one call."""

    def __init__(self, also: Any) -> None:
        import torch
        from torch.utils import _python_dispatch, flop_counter

        # As Any: torch's modes are untyped, and only their few documented methods are used.
        dispatch_mode: Any = _python_dispatch.TorchDispatchMode
        # FlopCounterMode's own formulas, by operator. Not FlopCounterMode itself: its module
        # tracker imports torch._dynamo on first use, for a per-module breakdown no budget
        # reads.
        formulas: dict[Any, Any] = dict(flop_counter.flop_registry)
        counts = [0, 0, 0]  # flops, elements, operations: a list the mode shares
        paused = PAUSED
        tensor = torch.Tensor

        def numel(value: Any) -> int:
            if isinstance(value, tensor):
                return int(value.numel())
            if isinstance(value, (list, tuple)):
                return sum(numel(item) for item in value)
            return 0

        class Counting(dispatch_mode):  # type: ignore[misc]
            @classmethod
            def _should_skip_dynamo(cls) -> bool:
                # Else torch wraps __torch_dispatch__ in a dynamo guard whose first call
                # imports torch._dynamo (3 to 11 s a child, 800 modules); it only matters for
                # torch.compile inside the mode, which no lesson's call needs.
                return False

            def __torch_dispatch__(
                self,
                func: Any,
                types: Any,
                args: tuple[Any, ...] = (),
                kwargs: dict[str, Any] | None = None,
            ) -> Any:
                kwargs = kwargs or {}
                out = func(*args, **kwargs)
                if paused[0]:  # the harness's own set-up: not the answer's work
                    return out
                formula = formulas.get(func.overloadpacket)
                if formula is not None:
                    counts[0] += int(formula(*args, **kwargs, out_val=out))
                if not getattr(func, "is_view", False):
                    counts[1] += numel(args) + numel(list(kwargs.values())) + numel(out)
                    counts[2] += 1
                return out

        self._counts = counts
        self._mode: Any = Counting()
        self.also = also
        """The smaller inputs of a growth budget, as the job packed them (rebuilt later)."""
        self.smaller: list[Any] | None = None
        self.figures: dict[str, Any] = {}
        self._mode.__enter__()

    def read(self) -> tuple[int, int, int]:
        """The counts so far: flops, elements, operations."""
        flops, elements, operations = self._counts
        return flops, elements, operations

    def call(self, function: Callable[..., Any], arguments: list[Any]) -> Any:
        """Call *function* on *arguments* and record what the call alone did (its figures
        stay recorded if it raises)."""
        before = self.read()
        try:
            return function(*arguments)
        finally:
            after = self.read()
            self.figures = dict(zip(MEASURES, (b - a for a, b in zip(before, after))))

    def report(self, function: Callable[..., Any]) -> dict[str, Any]:
        """What goes in the result: the call's figures, and with ``also`` the figures of
        *function* on the smaller inputs (or why there are none)."""
        report: dict[str, Any] = {"at": self.figures}
        if self.smaller is None:
            return report
        main = self.figures
        try:
            self.call(function, self.smaller)
        except BaseException as exc:  # learner code: its exception is a fact, not a crash
            report["error"] = f"{type(exc).__name__}: {exc}"[:500]
        else:
            report["smaller"] = self.figures
        self.figures = main
        return report

    def stop(self) -> None:
        """Take the mode off torch's stack (learner code may have taken it already)."""
        try:
            self._mode.__exit__(None, None, None)
        except Exception:
            pass


def start(spec: Any) -> Counter | None:
    """The counter a request's ``work`` asks for, counting from now; None when it asks for
    none (the call then runs with no mode in its way)."""
    if not isinstance(spec, dict):
        return None
    return Counter(spec.get("also"))


def stop(counter: Counter | None) -> None:
    """End *counter*'s count, if there is one."""
    if counter is not None:
        counter.stop()


def believable(data: Any) -> dict[str, Any] | None:
    """The figures of a child's result as the judge may read them: each one a whole number
    from 0 to :data:`MAX_FIGURE`, the error a short text; None when *data* is not a report
    :meth:`Counter.report` could have written (learner code may write the result file)."""
    if not isinstance(data, dict):
        return None

    def figures(value: Any) -> dict[str, int] | None:
        if not isinstance(value, dict) or set(value) != set(MEASURES):
            return None
        read = {}
        for name in MEASURES:
            figure = value[name]
            if type(figure) is not int or not 0 <= figure <= MAX_FIGURE:
                return None
            read[name] = figure
        return read

    at = figures(data.get("at"))
    if at is None:
        return None
    kept: dict[str, Any] = {"at": at}
    if "smaller" in data:
        smaller = figures(data["smaller"])
        if smaller is None:
            return None
        kept["smaller"] = smaller
    if isinstance(data.get("error"), str):
        kept["error"] = data["error"][:500]
    return kept
