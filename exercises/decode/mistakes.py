"""Known wrong answers to "Decode token ids", one per watch-out in exercise.toml.

Each function takes solve's arguments and returns what a learner who makes that mistake
returns. The grader compares a failing answer with these to name the mistake.
"""


def each_token_decoded(ids, vocab):
    # Each token decoded on its own and the texts joined: a character whose bytes span two
    # tokens becomes two U+FFFD. minbpe joins the bytes first, `b"".join(self.vocab[idx]
    # for idx in ids)`, then decodes (karpathy/minbpe basic.py, decode). Decoding token by
    # token is the bug fixed in exo-explore/exo#1691 ("decodes each token independently
    # with tokenizer.decode([token_id]), which produces U+FFFD for partial byte
    # sequences") and waybarrios/vllm-mlx#109 (Czech "ď", 0xC4 0x8F, arriving as "��").
    return "".join(bytes(vocab[i]).decode("utf-8", errors="replace") for i in ids)


def invalid_bytes_dropped(ids, vocab):
    # errors="ignore" for errors="replace": invalid bytes vanish instead of becoming U+FFFD.
    # minbpe decodes with errors="replace" (karpathy/minbpe basic.py), as tiktoken's decode
    # does by default (openai/tiktoken core.py, `errors="replace"`). errors="strict", the
    # default of bytes.decode, raises UnicodeDecodeError on these cases, which the learner
    # sees at their own line, so it is not catalogued here: a mistake function must answer
    # every case.
    data = b"".join(bytes(vocab[i]) for i in ids)
    return data.decode("utf-8", errors="ignore")


def each_byte_a_character(ids, vocab):
    # Each byte made a character with chr(): the Latin-1 reading, where the two bytes of "é"
    # become "Ã©", the mojibake of UTF-8 read as Latin-1 (Python's Unicode HOWTO, "Encodings";
    # a weak source for this lesson's task, no bug report found).
    return "".join(chr(b) for i in ids for b in vocab[i])
