"""Similarity benchmark (issue 42): time and memory of ``python -m pytest_lessons similarity``
on a synthetic class, 300 learners by default.

    python benchmarks/similarity.py                      # 300 learners, 5 lessons
    python benchmarks/similarity.py --learners 100 --lessons 2

Each learner's file of a lesson is the lesson's reference with that learner's own names for
its local variables, comments of their own or none, and a line or two of their own, as
honest solutions of a short lesson look; a tenth hand in the starter untouched; and in each
lesson 5 learners copy a classmate's file, renaming its variables. The planted copies must
rank first in their lesson (the benchmark fails otherwise: a fast comparison that misses them
is no result). Printed: seconds per lesson (fingerprints and comparisons), pairs compared and
listed, and the process's peak memory (resident set, after the imports and at the end).
"""

from __future__ import annotations

import argparse
import io
import keyword
import random
import re
import resource
import sys
import tempfile
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_lessons import similarity  # noqa: E402
from pytest_lessons.core.submissions import Roll  # noqa: E402

LESSONS = ("combine_heads", "causal_attention", "layer_norm", "cross_entropy", "gelu_mlp")
WORDS = ("out", "res", "tmp", "val", "acc", "data", "arr", "buf", "cur", "part", "step", "item")
COMMENTS = (
    "# first the scores",
    "# shapes: check them",
    "# TODO tidy up",
    "# this took me a while",
    "# keep float64 here",
)


def local_names(code: str) -> list[str]:
    """The names the code assigns (its locals), which a learner would name their own way."""
    names = set(re.findall(r"^\s*([a-z_][a-z0-9_]*)\s*=", code, re.MULTILINE))
    for group in re.findall(r"^\s*([a-z_][a-z0-9_, ]*)\s*=", code, re.MULTILINE):
        names.update(n.strip() for n in group.split(",") if n.strip())
    return sorted(n for n in names if not keyword.iskeyword(n) and n.isidentifier())


def rename(code: str, mapping: dict[str, str]) -> str:
    out = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        text = token.string
        if token.type == tokenize.NAME and text in mapping:
            text = mapping[text]
        out.append((token.type, text))
    return tokenize.untokenize(out)


def own_statement(rng: random.Random) -> str:
    """A line of a learner's own: a check or a value of their own making."""
    a, b, c = rng.randrange(2, 99), rng.randrange(2, 99), rng.randrange(2, 9)
    ops = rng.sample(["+", "-", "*", "//", "%"], 2)
    forms = (
        f"scale_{a} = ({a} {ops[0]} {b}) {ops[1]} {c}",
        f"assert {a} {ops[0]} {b} > -{c * 100}, 'shapes {a}'",
        f"checks = [i {ops[0]} {c} for i in range({a}) if i % {c} == {b % c}]",
        f"if {a} > {b}:\n        limit = {a} {ops[1]} {c}\n    else:\n        limit = {b}",
        f"seen = {{k: k {ops[0]} {a} for k in range({c})}}",
    )
    return rng.choice(forms)


def own_version(code: str, rng: random.Random) -> str:
    """The reference as one learner might have written it: their own names, comments and a
    few lines of their own (copydetect sees through names and comments; not through code)."""
    mapping = {n: f"{rng.choice(WORDS)}_{rng.randrange(1000)}" for n in local_names(code)}
    lines = []
    for line in rename(code, mapping).splitlines():
        if line.strip().startswith("#") and rng.random() < 0.6:
            continue
        if line.startswith("    return"):
            lines += ["    " + own_statement(rng) for _ in range(rng.randrange(2, 5))]
        lines.append(line)
        if line.startswith("    ") and rng.random() < 0.15:
            lines.append("    " + rng.choice(COMMENTS))
    return "\n".join(lines) + "\n"


def make_class(
    top: Path, learners: int, lessons: list[Path], seed: int
) -> dict[str, set[frozenset[str]]]:
    """Write the class; return, per lesson, the planted pairs (copier and copied)."""
    rng = random.Random(seed)
    names = [f"learner{n:03d}" for n in range(learners)]
    planted: dict[str, set[frozenset[str]]] = {}
    for lesson in lessons:
        reference = (lesson / "reference.py").read_text()
        starter = (lesson / "solution.py").read_text()
        files: dict[str, str] = {}
        for name in names:
            files[name] = starter if rng.random() < 0.1 else own_version(reference, rng)
        honest = [n for n in names if files[n] != starter]
        copiers = rng.sample(honest, 10)
        pairs = set()
        for copier, copied in zip(copiers[:5], copiers[5:]):
            mapping = {n: f"x{rng.randrange(1000)}" for n in local_names(files[copied])}
            files[copier] = rename(files[copied], mapping)
            pairs.add(frozenset((copier, copied)))
        planted[lesson.name] = pairs
        for name, text in files.items():
            folder = top / name / lesson.name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "solution.py").write_text(text)
    return planted


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--lessons", type=int, default=5)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    lessons = [ROOT / "exercises" / name for name in LESSONS[: args.lessons]]
    import copydetect  # noqa: F401  (its imports, numpy and matplotlib, count before)

    baseline = peak_mib()
    print(f"{args.learners} learners, {len(lessons)} lessons; after the imports {baseline:.0f} MiB")
    failed = False
    with tempfile.TemporaryDirectory() as temporary:
        top = Path(temporary)
        planted = make_class(top, args.learners, lessons, args.seed)
        learners = Roll.of(top).learners
        total = total_cpu = 0.0
        for lesson in lessons:
            start, cpu = time.perf_counter(), time.process_time()
            found = similarity.compare_lesson(lesson / "exercise.toml", top, learners, 0.5)
            spent, cpu = time.perf_counter() - start, time.process_time() - cpu
            total += spent
            total_cpu += cpu
            top_pairs = {
                frozenset((p.first, p.second)) for p in found.pairs[: len(planted[lesson.name])]
            }
            missed = planted[lesson.name] - top_pairs
            failed |= bool(missed)
            best = found.pairs[len(planted[lesson.name])].score if len(found.pairs) > 5 else 0.0
            print(
                f"{lesson.name:18} {spent:6.2f} s ({cpu:5.2f} s CPU)  {found.compared} files, "
                f"{len(found.pairs)} pairs at 50% or more; planted copies first: "
                f"{'yes' if not missed else 'NO, missed ' + str(len(missed))}; "
                f"best honest pair {best:.0%}"
            )
        above = peak_mib() - baseline
        print(f"total {total:.1f} s, {total_cpu:.1f} s CPU; peak memory {peak_mib():.0f} MiB")
        print(f"({above:.0f} MiB above the imports)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
