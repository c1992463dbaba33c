"""The one JSON parser of request bodies: nesting is counted on the text before parsing, so a deep
document is refused whatever the interpreter's recursion limit is; and importing the server leaves
that limit where Python sets it (docs/security.md, "Input")."""

from __future__ import annotations

import sys

import pytest

from iam_console.core.json_input import MAX_DEPTH, JsonRefused, nests_deeper, parse_json

DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000


def test_importing_the_server_keeps_the_recursion_limit():
    import iam_console.api.app  # every route and service, eth-account's py_ecc among them
    import iam_console.federation.wallet  # noqa: F401

    assert sys.getrecursionlimit() <= 10_000, "a library raised the recursion limit: put it back after its import"


def test_a_deep_document_is_refused_before_parsing_even_with_a_raised_limit():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200_000)  # as py_ecc would: the C parser would overflow the C stack
    try:
        with pytest.raises(JsonRefused, match="nests deeper than 64 levels"):
            parse_json(DEEP_OBJECT)
        with pytest.raises(JsonRefused, match="nests deeper"):
            parse_json("[" * 100_000 + "]" * 100_000)
    finally:
        sys.setrecursionlimit(limit)


def test_brackets_inside_strings_do_not_count():
    text = '{"a": "' + "[{" * 500 + '", "b": "\\"[[[[\\"", "c": [[1]]}'
    assert not nests_deeper(text, MAX_DEPTH)
    assert parse_json(text)["c"] == [[1]]
    exactly = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert not nests_deeper(exactly, MAX_DEPTH) and parse_json(exactly.encode())
    assert nests_deeper("[" + exactly + "]", MAX_DEPTH)


def test_a_deep_wallet_token_is_a_bad_token():
    from iam_console.core.errors import ServiceError
    from iam_console.federation import wallet

    with pytest.raises(ServiceError, match=wallet.BAD_TOKEN):
        wallet._token("[" * 9_000 + "]" * 9_000)
