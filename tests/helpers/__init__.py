"""What several test modules share; no test module imports another (tests/README.md)."""

from .course import EXERCISES, copy, features, representative
from .fake import FakeRunner, double, grade_all, grader, lesson
from .lessons import (
    CASE_TIMEOUT,
    COMBINE_HEADS,
    DOUBLE_RIGHT,
    DOUBLE_TOML,
    HAS_TORCH,
    NO_TORCH,
    NO_TRANSPOSE,
    OUTSIDE_ENVIRONMENT,
    REFERENCE,
    ROOT,
    TRANSPOSE_REFERENCE,
    TRANSPOSE_TOML,
    case_result,
    dedent,
    failed,
    said,
)
from .procs import alive, descendants, wait_until

__all__ = [
    "CASE_TIMEOUT",
    "COMBINE_HEADS",
    "DOUBLE_RIGHT",
    "DOUBLE_TOML",
    "EXERCISES",
    "HAS_TORCH",
    "NO_TORCH",
    "NO_TRANSPOSE",
    "OUTSIDE_ENVIRONMENT",
    "REFERENCE",
    "ROOT",
    "TRANSPOSE_REFERENCE",
    "TRANSPOSE_TOML",
    "FakeRunner",
    "alive",
    "case_result",
    "copy",
    "dedent",
    "descendants",
    "double",
    "failed",
    "features",
    "grade_all",
    "grader",
    "lesson",
    "representative",
    "said",
    "wait_until",
]
