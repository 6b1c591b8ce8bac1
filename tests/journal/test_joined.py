"""Joined (plangate.journal.joined): a set of ids kept as one string, for hook state."""

from __future__ import annotations

import random

from plangate.journal.joined import SEARCHES, SEPARATOR, Joined


def test_it_answers_and_joins_as_a_set_and_a_list_would() -> None:
    rnd = random.Random(16)
    ids = [f"toolu_{rnd.randrange(400):04d}" for _ in range(2_000)]
    joined = Joined()
    seen: list[str] = []
    for number, item in enumerate(ids):
        assert (item in joined) == (item in seen)  # past SEARCHES lookups it keeps a set
        assert joined.add(item)
        if item not in seen:
            seen.append(item)
        if number % 97 == 0:  # the string, asked for midway, has every id so far, once
            assert joined.text == SEPARATOR + "".join(i + SEPARATOR for i in seen)
    assert joined.items() == seen
    assert joined.searches > SEARCHES and joined.seen == set(seen)


def test_a_loaded_string_goes_on_and_few_lookups_need_no_set() -> None:
    first = Joined.of(["a", "b"])
    again = Joined(first.text)
    assert again.add("c") and "c" in again and "a" in again and "z" not in again
    assert again.seen is None  # a hook run's few lookups searched the string
    assert again.text == "\na\nb\nc\n" and again.items() == ["a", "b", "c"]
    assert Joined().items() == [] and Joined().text == SEPARATOR


def test_an_id_holding_the_separator_is_refused() -> None:
    joined = Joined.of(["a"])
    assert not joined.add("b\nc")
    assert joined.items() == ["a"] and "b\nc" not in joined
