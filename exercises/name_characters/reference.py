"""The author's answer to "The characters of the names"."""


def solve(names):
    # 1. Split the text into names: split() cuts at line breaks and leaves out empty lines.
    lines = names.split()
    # 2. Join them into one string: every character of every name, no line break.
    text = "".join(lines)
    # 3. A set of it: each character once, in no order.
    return set(text)
