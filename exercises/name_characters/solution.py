"""The characters of the names: your solution goes here.

Check it with:  pytest exercises/name_characters
"""


def solve(names):
    """Return the alphabet of a names file.

    names: the text of the file, one name a line (it may end with a newline).
    Return a set of one-character strings: every character that occurs in a name, once
    each. The line breaks are not characters of any name.
    """
    raise NotImplementedError
