"""The course library: reference building blocks that a lesson's code may import.

    from course_lib import triu
    from course_lib import gpt_forward    # or: from course_lib.gpt import gpt_forward

Each name is the reference answer of an earlier lesson (``outer`` of outer_product, ``eye`` of
eye, ``triu`` of triu; ``gpt_forward`` of gpt_forward, and the tiny GPT's parts in
course_lib/gpt.py), so a later lesson runs on a right part even while your own earlier
solution still has a bug. A lesson's code may import the parts of the lessons before it only:
while a lesson is graded, its own answer here, and a later lesson's, is not there (importing
it says so). A lesson whose exercise.toml says ``parts = "own"`` gives you your own solutions
under these names instead. The files are read-only while grading.
"""

from course_lib.gpt import block, causal_self_attention, gelu, gpt_forward, layer_norm, mlp
from course_lib.tensors import eye, outer, triu

__all__ = [
    "block",
    "causal_self_attention",
    "eye",
    "gelu",
    "gpt_forward",
    "layer_norm",
    "mlp",
    "outer",
    "triu",
]
