"""Files for other programs and people (autograder results, gradebooks, the class report,
feedback files), made from :class:`~pytest_lessons.core.results.CaseResult` lists only.

Import rule: reports import the standard library, their own modules and the core's data and
words (``core.results``, ``core.model``, ``core.course``, ``core.summary``,
``core.submissions``, ``core.words``); never the grader, the isolation layer, pytest or a front end
(``tests/test_layers.py`` checks it).
"""
