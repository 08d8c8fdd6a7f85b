"""The course library: reference building blocks that a lesson's code may import.

    from course_lib import triu

Each name is the reference answer of an earlier lesson (``outer`` of outer_product, ``eye`` of
eye, ``triu`` of triu), so a later lesson runs on a right part even while your own earlier
solution still has a bug. A lesson whose exercise.toml says ``parts = "own"`` gives you your
own solutions under these names instead. The files are read-only while grading.
"""

from course_lib.tensors import eye, outer, triu

__all__ = ["eye", "outer", "triu"]
