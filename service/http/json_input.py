"""JSON as the service reads it from clients: strict, bounded, and never recursing on their
behalf; and as it writes its answers: fast.

Python's ``json`` accepts things a hostile body uses: nesting ~1,000 deep overflows its
recursive parser (``RecursionError``, once a 500), a repeated key silently keeps the last
value (so two readers of one body may disagree), and ``NaN``, ``Infinity`` and ``1e999`` are
not JSON at all. ``StrictJSONProvider`` is the app's JSON provider (``app.json``); every
request body goes through its ``loads``, which raises ``MalformedJson`` naming why.

Every answer's body goes through its ``response``, which writes with orjson (compiled: an
action's answer carries the seat's whole view, and the standard encoder spent some 7% of an
API process on it). The bytes differ from the standard encoder's only where JSON allows it
(non-ASCII characters are written as UTF-8 rather than escaped); keys keep their order.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, cast

import orjson
from flask import Flask, Response
from flask.json.provider import DefaultJSONProvider

#: How deep objects and arrays may nest in a request body unless configured otherwise.
DEFAULT_MAX_DEPTH = 32

#: A JSON string (skipped whole, so brackets inside it do not count) or one bracket.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPENING = frozenset("[{")
_CLOSING = frozenset("]}")
_SHOWN_KEY_LENGTH = 40


class MalformedJson(ValueError):
    """A body that is not acceptable JSON; ``reason`` completes "The body ..." for a client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def loads_strict(data: str | bytes | bytearray, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """``data`` parsed as JSON, refusing nesting deeper than ``max_depth``, duplicate keys and
    non-finite numbers (raises ``MalformedJson``)."""
    text = _text(data)
    _check_depth(text, max_depth)
    try:
        value = json.loads(
            text,
            object_pairs_hook=_object_without_duplicates,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except MalformedJson:
        raise
    except (ValueError, RecursionError) as error:  # RecursionError: only if max_depth is huge
        raise MalformedJson(f"is not JSON ({_first_line(error)})") from None
    _check_text(value)
    return value


#: Dates and dataclasses handed to Flask's own conversion (``DefaultJSONProvider.default``: a
#: date as an HTTP date), so an answer means what it meant before.
_ORJSON_OPTIONS = (
    orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_APPEND_NEWLINE
)


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON provider, reading with ``loads_strict`` and writing answers with orjson."""

    max_depth: int = DEFAULT_MAX_DEPTH

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return loads_strict(s, self.max_depth)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        if (self.compact is None and self._app.debug) or self.compact is False:
            # Indented, for a person reading.
            return cast(Response, super().response(*args, **kwargs))
        value = self._prepare_response_obj(args, kwargs)
        # Keys in the order the standard provider writes them: sorted, or (the app's choice,
        # service.app) as the value holds them.
        options = _ORJSON_OPTIONS | (orjson.OPT_SORT_KEYS if self.sort_keys else 0)
        try:
            body = orjson.dumps(value, default=self.default, option=options)
        except orjson.JSONEncodeError:  # a TypeError, as Flask's ``default`` raises it
            # What orjson refuses and the standard encoder writes (an integer past 64 bits):
            # the standard way, as before.
            return cast(Response, super().response(*args, **kwargs))
        # The app is a Flask app, whose responses are flask.Response (the provider's own
        # annotation names the sans-I/O base class).
        return cast(Flask, self._app).response_class(body, mimetype=self.mimetype)


def _text(data: str | bytes | bytearray) -> str:
    if isinstance(data, str):
        return data
    try:
        # As json.loads does with bytes (UTF-8, -16 or -32, found from the first bytes), but
        # strictly: an encoded lone surrogate is no character.
        return bytes(data).decode(json.detect_encoding(data))
    except UnicodeDecodeError:
        raise MalformedJson("is not JSON (not UTF-8 text)") from None


def _check_depth(text: str, max_depth: int) -> None:
    """Count bracket depth in one pass, before the recursive parser sees the text."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in _OPENING:
            depth += 1
            if depth > max_depth:
                raise MalformedJson(f"is nested too deep (more than {max_depth} levels)")
        elif token in _CLOSING:
            depth -= 1


def _check_text(value: Any) -> None:
    """Refuse a lone surrogate escaped in a string or key (``"\\ud800"``): it is no character,
    and could not be stored or answered in UTF-8."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            strings: list[str] = [item]
        elif isinstance(item, dict):
            strings = list(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            strings = []
            pending.extend(item)
        else:
            continue
        for text in strings:
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise MalformedJson("is not JSON (a string holds a lone surrogate)") from None


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                shown = json.dumps(key[:_SHOWN_KEY_LENGTH])
                raise MalformedJson(f"has a duplicate key {shown}")
            seen.add(key)
    return result


def _refuse_constant(name: str) -> Any:
    raise MalformedJson(f"is not JSON ({name} is not a JSON number)")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise MalformedJson(f"is not JSON (the number {literal[:20]} is out of range)")
    return value


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__
