"""Randomness per position: deterministic, distinct per position, lazily seeded but identical."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from projections.rng import LazyRandom, derive_rng, seed_commitment


def draws(rng: random.Random) -> list[object]:
    deck = list(range(40))
    rng.shuffle(deck)
    return [
        rng.random(),
        rng.randrange(7),
        rng.choice("abcdef"),
        rng.sample(range(100), 6),
        rng.getrandbits(90),
        rng.choices(range(10), k=5),
        deck,
    ]


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_a_lazily_seeded_generator_draws_exactly_what_an_eager_one_draws(key: int) -> None:
    assert draws(LazyRandom(key)) == draws(random.Random(key))


def test_the_same_seed_and_position_always_give_the_same_draws() -> None:
    assert draws(derive_rng("seed", 12)) == draws(derive_rng("seed", 12))


def test_other_positions_and_other_seeds_give_other_draws() -> None:
    assert draws(derive_rng("seed", 12)) != draws(derive_rng("seed", 13))
    assert draws(derive_rng("seed", 12)) != draws(derive_rng("other", 12))


def test_the_commitment_is_the_sha256_of_the_seed() -> None:
    assert seed_commitment("abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
