"""Known wrong answers to "Text to UTF-8 bytes", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""

import unicodedata


def code_points(text):
    # One number per character: the code point, not its bytes. Hugging Face's ByT5
    # tokenizer shipped this way and gave code points where the model expects bytes
    # (huggingface/transformers#13762, "ByT5 tokenizer gives indices of chars instead of
    # bytes"). Encoding with latin-1 gives the same numbers for code points up to 255.
    return [ord(c) for c in text]


def utf16(text):
    # The wrong codec: Python's "utf-16" writes two bytes per code unit and a byte order
    # mark (255, 254) first, which surprises people asking why their bytes start with
    # 0xff 0xfe (Stack Overflow question 53305360, "Is the [0xff, 0xfe] prefix required on
    # utf-16 encoded strings?").
    return list(text.encode("utf-16"))


def normalised_nfkc(text):
    # Normalising before encoding: SentencePiece normalises its input with NFKC by default
    # (its `nmt_nfkc` normalization rule, google/sentencepiece doc/normalization.md), and
    # code ported from such a tokenizer carries the step into a byte encoder.
    return list(unicodedata.normalize("NFKC", text).encode("utf-8"))
