"""How the tokenizer lesson drives your Tokenizer (author code; it holds no answers).

The grader calls drive() with your solution.py as `learner` and the case's inputs. It builds
one Tokenizer, encodes the text twice (a tokenizer must give the same ids every time: one that
keeps state between calls would not), and decodes the ids it gave. The ids and the decoded
text are the case's two observables, each judged by its kind in exercise.toml.
"""

from pytest_lessons.harness import same


def drive(learner, vocab, merges, special_tokens, text):
    tokenizer = learner.Tokenizer(vocab, merges, special_tokens)
    ids = tokenizer.encode(text)
    same(ids, tokenizer.encode(text), "the ids of two encode calls on the same text")
    return {"ids": ids, "text": tokenizer.decode(ids)}
