"""The options the end-to-end benchmarks share: how many rounds, the isolation mode, and how long
to wait, untimed, before each case. ``python benchmarks/NAME.py`` puts this folder first on
``sys.path``, so each benchmark beside it imports this module by name."""

from __future__ import annotations

import argparse

#: The isolation modes a benchmark can run in (the run setting's, but for auto).
MODES = ["fork", "spawn", "off"]
#: Seconds a spawn-mode case waits by default, untimed: long enough for a Python started ahead
#: to have imported torch, so the case does not time that import.
SPAWN_SETTLE = 6.0


def parser(rounds: int, description: str | None = None) -> argparse.ArgumentParser:
    """A parser with ``--rounds`` (*rounds* by default), ``--isolation`` and ``--settle``."""
    made = argparse.ArgumentParser(description=description)
    made.add_argument("--rounds", type=int, default=rounds)
    made.add_argument("--isolation", default="fork", choices=MODES)
    made.add_argument(
        "--settle",
        type=float,
        default=None,
        help=f"seconds to wait, untimed, before each case (default: 0; {SPAWN_SETTLE:g} in spawn "
        "mode, where a case would otherwise wait for a Python started ahead to import torch)",
    )
    return made


def settle(args: argparse.Namespace) -> float:
    """The seconds to wait before each case: ``--settle``, or its default for the mode."""
    if args.settle is not None:
        return float(args.settle)
    return SPAWN_SETTLE if args.isolation == "spawn" else 0.0
