"""The author's answer to "Text to UTF-8 bytes"."""


def solve(text):
    # 1. Encode as UTF-8: one to four bytes per character, in the text's order.
    data = text.encode("utf-8")
    # 2. A bytes object iterates as ints from 0 to 255: return them as a list.
    return list(data)
