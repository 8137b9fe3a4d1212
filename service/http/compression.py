"""gzip of the answers a client accepts compressed (issue 32): the web app's static files
and JSON bodies, when the request says ``Accept-Encoding: gzip``. Streams (SSE), small bodies,
partial and conditional answers and bodies already encoded go as they are."""

from __future__ import annotations

import gzip

from flask import Flask, Request, Response, request

#: Below this many bytes gzip's header and the CPU cost outweigh the saving.
MIN_BYTES = 500
#: What is worth compressing: text. Images and archives are compressed already.
COMPRESSIBLE = ("application/json", "application/problem+json", "text/", "application/javascript")
#: Fast and still about a fifth of the size for JSON and scripts.
LEVEL = 5


def install_compression(app: Flask) -> None:
    """Compress each answer in place, after every other after-request function changed it."""
    app.after_request(compress)


def accepts_gzip(incoming: Request) -> bool:
    for part in incoming.headers.get("Accept-Encoding", "").split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*") and params.replace(" ", "") != "q=0":
            return True
    return False


def compress(response: Response) -> Response:
    """The answer gzipped when the client accepts it and it is text worth compressing."""
    response.vary.add("Accept-Encoding")
    if (
        response.status_code != 200
        or response.mimetype == "text/event-stream"
        # a generator's body is read as it is made; a file's (direct passthrough) at once
        or (response.is_streamed and not response.direct_passthrough)
        or "Content-Encoding" in response.headers
        or not (response.mimetype or "").startswith(COMPRESSIBLE)
        or not accepts_gzip(request)
    ):
        return response
    response.direct_passthrough = False  # a static file's body is read here, once
    source = response.response
    body = response.get_data()
    close = getattr(source, "close", None)
    if close is not None:
        close()  # the file it was read from
    if len(body) < MIN_BYTES:
        return response
    response.set_data(gzip.compress(body, compresslevel=LEVEL, mtime=0))
    response.headers["Content-Encoding"] = "gzip"
    # The ETag stays as it is: it names the game's version (If-Match, If-None-Match), which
    # the encoding does not change; Vary tells caches to keep the encodings apart.
    return response
