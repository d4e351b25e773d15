"""Bare ASGI apps for the tests that start `pyox-agents serve` as a process: each a module's
source, written to a folder the server imports from, that answers every request with `body`."""

from __future__ import annotations

import textwrap


def asgi_module(imports: str, body: str, content_type: str = "text/plain") -> str:
    """The source of a module whose `app` completes the lifespan and answers each request with
    the bytes of the expression `body` (after `imports`)."""
    return textwrap.dedent(imports) + textwrap.dedent(f"""

        async def app(scope, receive, send):
            if scope["type"] == "lifespan":
                while True:
                    message = await receive()
                    kind = message["type"].rsplit(".", 1)[-1]
                    await send({{"type": f"lifespan.{{kind}}.complete"}})
                    if kind == "shutdown":
                        return
            await send({{"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"{content_type}")]}})
            await send({{"type": "http.response.body", "body": {body}}})
    """)
