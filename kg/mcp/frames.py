"""What kg answers to a JSON-RPC frame the SDK cannot read, on every transport.

The SDK's readers drop, or answer without an id, a line or body that is not JSON, or JSON
that is no JSON-RPC message: a lone surrogate escape such as `\\ud800` is valid JSON but no
Unicode text, and the SDK's parser refuses it. `refusal` reads the frame first and says what
error to answer it with: a parse error (`id` null) for what is not JSON, an error for the
request's own `id` otherwise. kg.mcp.stdio and kg.serve.mcp answer with it.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def refusal(line: str) -> tuple[int | str | None, int, str] | None:
    """Why the SDK could not take `line`, as the JSON-RPC error to answer it with: (id,
    code, message); None when the line is a JSON-RPC message the SDK reads.

    >>> refusal("not json")[:2]
    (None, -32700)
    >>> refusal('{"jsonrpc": "2.0", "id": 6, "method": "ping", "params": {"q": "\\\\ud800"}}')[:2]
    (6, -32602)
    >>> refusal('{"jsonrpc": "2.0", "id": 7, "method": "ping"}') is None
    True
    """
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        data = json.loads(line)
    except ValueError as exc:
        return None, PARSE_ERROR, f"Parse error: the message is not JSON ({exc})"
    ident = data.get("id") if isinstance(data, dict) else None
    if isinstance(ident, bool) or not isinstance(ident, int | str):
        ident = None
    if _has_lone_surrogate(data):
        return ident, INVALID_PARAMS, (
            "the request holds a lone surrogate escape (\\ud800 to \\udfff), which is no "
            "Unicode character: send each character whole (a surrogate pair, or UTF-8)"
        )
    try:
        jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"msg": str(exc)}
        why = f"Invalid Request: not a JSON-RPC 2.0 message ({first['msg']})"
        return ident, INVALID_REQUEST, why
    return None
