"""Generate text from the course's tiny GPT with your own chapter 8 solutions.

    python exercises/generate.py "once upon"              # greedy, 200 characters
    python exercises/generate.py "the cat" -n 80          # 80 characters
    python exercises/generate.py "one day" --top-k 5 --temperature 0.8 --seed 1

The forward pass is your gpt_forward/solution.py. Greedy decoding is your
greedy_decode/solution.py, run on your own gpt_forward (the course library's gpt_forward is
replaced by yours for it, as a lesson with parts = "own" would). With --top-k, each next
character is drawn by your sample_top_k/solution.py instead, the loop written here. With
--library, the course library's gpt_forward (course_lib/gpt.py) stands in for yours, to try
your decoding on its own. The weights are read by the course library's small safetensors
reader: the safetensors package is not needed.

The model knows 28 characters (lower-case letters but j, q and z, space, new line, and
, . ?): write the prompt with those.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import torch

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
sys.path.insert(0, str(HERE))

import course_lib  # noqa: E402
from course_lib.gpt import load_config, load_weights  # noqa: E402


class NotSolved(Exception):
    """A lesson this command needs is not solved yet; the message says which and what to do."""


def shown(path: Path) -> str:
    """*path* as the learner names it: relative to where they run this command when it is
    beneath it (exercises/gpt_forward/solution.py, or the folder a copy of the course is in)."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def own(lesson: str) -> Callable[..., Any]:
    """solve of your lesson's solution.py, loaded from its file."""
    path = HERE / lesson / "solution.py"
    if not path.is_file():
        raise NotSolved(f"Write {shown(path)}: this command runs your solution of lesson {lesson}.")
    spec = importlib.util.spec_from_file_location(f"own_{lesson}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return checked(module, lesson, path)


def checked(module: ModuleType, lesson: str, path: Path) -> Callable[..., Any]:
    """The module's solve, wrapped so a starter's NotImplementedError becomes NotSolved."""
    solve = getattr(module, "solve", None)
    if not callable(solve):
        raise NotSolved(f"Define solve in {shown(path)}: this command runs your lesson {lesson}.")

    def call(*args: Any) -> Any:
        try:
            return solve(*args)
        except NotImplementedError:
            raise NotSolved(
                f"Solve lesson {lesson} first: {shown(path)} still raises NotImplementedError. "
                f"Check it with: pytest {shown(path.parent)}"
            ) from None

    return call


def encode(text: str, chars: str) -> list[int]:
    """The ids of *text*'s characters (NotSolved for a character the model lacks)."""
    unknown = sorted({c for c in text if c not in chars})
    if unknown:
        raise NotSolved(
            f"Write the prompt with the model's characters only: {''.join(unknown)!r} is not "
            f"among them. It knows {chars!r} (lower-case, no j, q or z)."
        )
    return [chars.index(c) for c in text]


def sample(
    prompt: list[int],
    n: int,
    forward: Callable[..., Any],
    weights: dict[str, torch.Tensor],
    config: dict[str, Any],
    top_k: int,
    temperature: float,
    seed: int,
) -> list[int]:
    """n ids drawn one at a time by your sample_top_k from your forward pass's last logits."""
    draw = own("sample_top_k")
    g = torch.Generator().manual_seed(seed)
    ids = list(prompt)
    for _ in range(n):
        context = torch.tensor([ids[-config["block_size"] :]])
        logits = forward(context, weights, config)[:, -1, :]
        _, token = draw(logits, min(top_k, logits.shape[-1]), temperature, g)
        ids.append(int(token.reshape(-1)[0]))
    return ids[len(prompt) :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompt", help="the text to continue, in the model's 28 characters")
    parser.add_argument("-n", type=int, default=200, help="characters to add (200)")
    parser.add_argument("--top-k", type=int, help="sample with your sample_top_k, keeping k")
    parser.add_argument("--temperature", type=float, default=1.0, help="with --top-k (1.0)")
    parser.add_argument("--seed", type=int, default=0, help="with --top-k: the draws' seed (0)")
    parser.add_argument(
        "--library", action="store_true", help="the course library's gpt_forward, not yours"
    )
    args = parser.parse_args(argv)
    # A model this small gains nothing from threads, and on a busy machine they cost 30x.
    torch.set_num_threads(1)
    config = load_config(FIXTURES / "tiny_gpt.json")
    weights = load_weights(FIXTURES / "tiny_gpt.safetensors")
    try:
        prompt = encode(args.prompt, config["chars"])
        if not prompt:
            raise NotSolved("Give a prompt of at least one character, such as 'once upon'.")
        forward = course_lib.gpt_forward if args.library else own("gpt_forward")
        with torch.no_grad():
            # One forward pass first, so an unsolved gpt_forward is named before the loop.
            forward(torch.tensor([prompt[-config["block_size"] :]]), weights, config)
            if args.top_k is not None:
                k, t = args.top_k, args.temperature
                new = sample(prompt, args.n, forward, weights, config, k, t, args.seed)
            else:
                # Your greedy_decode imports gpt_forward from the course library: yours
                # stands there while it loads and runs.
                course_lib.gpt_forward = forward  # type: ignore[attr-defined]
                new = own("greedy_decode")(prompt, args.n, weights, config)
    except NotSolved as why:
        print(f"generate.py: {why}", file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        print(
            "generate.py: your code raised the error above; `pytest exercises/<lesson>` shows "
            "which case of the lesson fails.",
            file=sys.stderr,
        )
        return 1
    print(args.prompt + "".join(config["chars"][int(i)] for i in new))
    return 0


if __name__ == "__main__":
    sys.exit(main())
