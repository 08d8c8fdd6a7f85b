"""Running learner code: the runners, the fork server (worker), the child that calls the
learner's function, the sandbox and its walls, and the outcome they report as plain data.

Import rule: isolation imports the standard library and its own modules only; never the core
(it must not know what the expected answer is), the reports, a front end or pytest
(``tests/test_layers.py`` checks it). The worker and the child import through this package, so
it holds nothing but this docstring.
"""
