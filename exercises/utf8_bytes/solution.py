"""Text to UTF-8 bytes: your solution goes here.

Check it with:  pytest exercises/utf8_bytes
"""


def solve(text):
    """Return the UTF-8 bytes of text.

    text: a str, possibly empty, with any characters.
    Return a Python list of ints from 0 to 255: the bytes of text encoded as UTF-8, in
    order (one byte for an ASCII character, two to four for any other).
    """
    raise NotImplementedError
