"""service.application.auth on its own: only a seat's exact token speaks for that seat."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.application.auth import AuthError, new_token, resolve_viewer, token_hash

TOKENS = [new_token() for _ in range(3)]
META = {"game_id": "g", "seat_token_hashes": [token_hash(token) for token in TOKENS]}


def test_each_seats_token_speaks_for_that_seat_alone() -> None:
    for seat, token in enumerate(TOKENS):
        viewer = resolve_viewer(META, f"Bearer {token}", admin_key=None)
        assert (viewer.seat, viewer.admin) == (seat, False)


def test_no_header_is_a_spectator_and_the_admin_key_is_no_seat() -> None:
    assert resolve_viewer(META, None, admin_key="k").spectator
    admin = resolve_viewer(META, "Bearer k", admin_key="k")
    assert (admin.seat, admin.admin) == (None, True)


@given(st.text(max_size=80))
def test_no_other_header_authenticates(header: str) -> None:
    if not header.strip():
        assert resolve_viewer(META, header, admin_key=None).spectator
        return
    with pytest.raises(AuthError) as refused:
        resolve_viewer(META, header, admin_key=None)
    assert refused.value.code == "invalid_token"


@given(st.sampled_from(TOKENS), st.integers(0, 42), st.characters(codec="ascii"))
def test_a_token_changed_by_one_character_is_refused(token: str, at: int, other: str) -> None:
    changed = token[:at] + other + token[at + 1 :]
    if changed == token:
        return
    with pytest.raises(AuthError):
        resolve_viewer(META, f"Bearer {changed}", admin_key=None)
