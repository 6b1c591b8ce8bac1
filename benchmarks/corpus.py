"""Text to fill synthetic journals with, and the random sizes of what they hold."""

from __future__ import annotations

import hashlib
import math
import os
import random
import re

MB = 1_000_000


class Corpus:
    """Text to fill records with: the interpreter's own standard library sources.

    Real tool results are mostly source code and command output, with tabs, quotes and
    backslashes that JSON must escape; stdlib sources have the same mix. Deterministic for
    one Python version.
    """

    def __init__(self, limit: int = 8 * MB) -> None:
        lib = os.path.dirname(os.__file__)
        texts: list[str] = []
        self.names: list[str] = []
        total = 0
        for name in sorted(os.listdir(lib)):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(lib, name), encoding="utf-8") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
            texts.append(text)
            self.names.append(name)
            total += len(text)
            if total >= limit:
                break
        self.text = "".join(texts)
        words = sorted(set(re.findall(r"\b[a-z]{3,12}\b", self.text)))
        self.words = words or ["word"]

    def snippet(self, rng: random.Random, size: int) -> str:
        """About ``size`` characters of whole lines."""
        size = max(1, min(size, len(self.text) // 2))
        start = rng.randrange(0, len(self.text) - size)
        newline = self.text.find("\n", start)
        start = newline + 1 if 0 <= newline < start + 200 else start
        end = self.text.rfind("\n", start, start + size)
        return self.text[start : end + 1] if end > start else self.text[start : start + size]

    def prose(self, rng: random.Random, words: int) -> str:
        out: list[str] = []
        sentence = 0
        for _ in range(words):
            word = rng.choice(self.words)
            if sentence == 0:
                word = word.capitalize()
            out.append(word)
            sentence += 1
            if sentence > 6 and rng.random() < 0.15:
                out[-1] += "."
                sentence = 0
            elif rng.random() < 0.02:
                out.append("\u2014")
        return " ".join(out) + "."


def lognormal_int(rng: random.Random, median: float, sigma: float, low: int, high: int) -> int:
    return int(min(high, max(low, rng.lognormvariate(math.log(median), sigma))))


def log_uniform_int(rng: random.Random, low: int, high: int) -> int:
    return int(math.exp(rng.uniform(math.log(low), math.log(high))))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
