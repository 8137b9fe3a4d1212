"""Answers are written by orjson (service.http.json_input): the same JSON as Flask's standard
provider writes, keys sorted, in less time."""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any

from flask import Flask, jsonify
from flask.json.provider import DefaultJSONProvider
from hypothesis import given, settings
from hypothesis import strategies as st

from service.http.json_input import StrictJSONProvider
from tests.json_strategies import json_values

#: What views, statuses and problems are made of: JSON values with string keys.
answer_values = json_values(
    st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=4, max_key_size=8
)


def app_with(provider: type[DefaultJSONProvider]) -> Flask:
    app = Flask(__name__)
    app.json = provider(app)
    return app


def answer(app: Flask, *args: Any, **kwargs: Any) -> bytes:
    with app.app_context():
        return bytes(jsonify(*args, **kwargs).get_data())


OURS = app_with(StrictJSONProvider)
STANDARD = app_with(DefaultJSONProvider)


@settings(max_examples=300, deadline=None)
@given(answer_values)
def test_an_answer_is_the_json_the_standard_provider_writes(value: Any) -> None:
    ours = answer(OURS, value)
    assert json.loads(ours) == json.loads(answer(STANDARD, value))
    assert ours.endswith(b"\n")


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), st.integers(), max_size=8))
def test_keys_are_written_in_the_standard_order(value: dict[str, int]) -> None:
    keys = list(json.loads(answer(OURS, value), object_pairs_hook=lambda pairs: pairs))
    assert [key for key, _ in keys] == sorted(value)


def test_keys_keep_the_order_of_the_value_when_the_app_does_not_sort() -> None:
    app = app_with(StrictJSONProvider)
    app.json.sort_keys = False  # as service.app sets it
    value = {"zeta": 1, "alpha": {"y": 2, "b": 3}, "mid": [{"k": 1, "a": 2}]}
    body = answer(app, value)
    assert body == json.dumps(value, separators=(",", ":")).encode() + b"\n"


def test_non_ascii_is_written_as_utf8_text() -> None:
    body = answer(OURS, {"name": "Zoë ♜"})
    assert "Zoë ♜".encode() in body
    assert json.loads(body) == {"name": "Zoë ♜"}


def test_dates_and_dataclasses_mean_what_flask_makes_them() -> None:
    @dataclasses.dataclass
    class Row:
        game_id: str
        seats: int

    value = {
        "at": datetime.datetime(2026, 12, 2, 13, 0, tzinfo=datetime.UTC),
        "row": Row("g1", 3),
    }
    ours = json.loads(answer(OURS, value))
    assert ours == json.loads(answer(STANDARD, value))
    assert ours["at"] == "Wed, 02 Dec 2026 13:00:00 GMT"
    assert ours["row"] == {"game_id": "g1", "seats": 3}


def test_what_orjson_refuses_is_written_the_standard_way() -> None:
    huge = {"count": 2**70, "text": "é"}
    body = answer(OURS, huge)
    assert json.loads(body) == huge
    assert body == answer(STANDARD, huge)


def test_keyword_arguments_and_several_values_as_flask_takes_them() -> None:
    assert json.loads(answer(OURS, seq=3, version=4)) == {"seq": 3, "version": 4}
    assert json.loads(answer(OURS, 1, "two")) == [1, "two"]


def test_in_debug_mode_an_answer_is_indented_for_a_person() -> None:
    app = app_with(StrictJSONProvider)
    app.debug = True
    assert b'\n  "a": 1' in answer(app, {"a": 1})
