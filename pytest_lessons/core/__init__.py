"""The grading core: the exercise format, running a case through a runner, judging the answer,
diagnosing a mistake, the learner's words, the results.

Import rule: the core imports the standard library, ``tomli``, its own modules and the isolation
layer's contract (:mod:`~pytest_lessons.isolation.runner`'s ``Job`` and ``Runner``,
:mod:`~pytest_lessons.isolation.outcome`, :mod:`~pytest_lessons.isolation.sandbox`'s ``Policy``
and, for both front ends' choice, ``choose``; :mod:`~pytest_lessons.isolation.library`'s
``Library``, the course library a ``Job`` carries);
never pytest, torch, IPython, :mod:`subprocess`, the reports or a front end
(``tests/test_layers.py`` checks it). The worker and the notebook load it without pytest.
"""
