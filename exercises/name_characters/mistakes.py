"""Known wrong answers to "The characters of the names", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def with_newline(names):
    # The set of the raw text. makemore (karpathy/nn-zero-to-hero, lecture 2) reads the file
    # with splitlines() and builds its alphabet from ''.join(words), so the newline never
    # enters it; taken from the raw file, "\n" becomes a 28th character and every index
    # after it shifts.
    return set(names)


def set_of_names(names):
    # The set of the lines, one item per whole name, where the characters of the names are
    # meant (a slip between the two loops of the vocabulary step).
    return set(names.split())
