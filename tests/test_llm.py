"""The Retry-After reading the agent and the judge share."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime

import pytest

from ghost_eval.llm import retry_after_seconds

NOW = datetime(2026, 3, 12, 14, 15, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:15:30 GMT"}, 30.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:15:30 +0000"}, 30.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:15:30 -0000"}, 30.0),  # no zone in Python's reading: still UTC
        ({"retry-after": "Thu, 12 Mar 2026 15:15:30 +0100"}, 30.0),
        ({"retry-after": "Thu, 12 Mar 2026 14:14:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after(headers: dict[str, str] | None, expected: float | None) -> None:
    assert retry_after_seconds(headers, now=NOW) == expected


def test_a_minus_zero_date_is_what_email_utils_writes_for_a_naive_time() -> None:
    written = email.utils.format_datetime(datetime(2026, 3, 12, 14, 15, 30))
    assert written.endswith("-0000") and retry_after_seconds({"retry-after": written}, now=NOW) == 30.0
