"""Secrets never reach the artifacts or the model; ordinary diagnostic output passes through untouched."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ghost_eval.agent.redact import REDACTED, redact, redact_value

SECRETS = [
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUA\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUA",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx\n", "MIIEpAIBAAKCAQEAx"),
    ("Authorization: Bearer eyJ0eXAiOiJKV1QifQ.eyJvaWQiOiIxIn0.c2lnbmF0dXJl", "eyJvaWQiOiIxIn0"),
    ("token: eyJ0eXAiOiJKV1QifQ.eyJvaWQiOiIxIn0.c2lnbmF0dXJl", "c2lnbmF0dXJl"),
    ("x-api-key: sk-ant-api03-AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrSt"),
    ("GEMINI_API_KEY=AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdefghijklmnopqrstu"),
    (
        "DefaultEndpointsProtocol=https;AccountName=nwlogs080613;AccountKey=Zm9vYmFyYmF6cXV4==;EndpointSuffix=core.windows.net",
        "Zm9vYmFyYmF6cXV4",
    ),
    ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=c2VjcmV0a2V5MTIz", "c2VjcmV0a2V5MTIz"),
    ("https://nwlogs080613.blob.core.windows.net/logs?sv=2022-11-02&ss=b&sig=AbC%2BdEf%3D&se=2026-01-01", "AbC%2BdEf%3D"),
    ("postgres://admin:hunter2secret@10.0.1.5:5432/app", "hunter2secret"),
    ('{"client_secret": "Q~8Q~s3cr3tvalue"}', "s3cr3tvalue"),
    ("password=CorrectHorse", "CorrectHorse"),
    ("pass: CorrectHorse", "CorrectHorse"),
    ("export pass=CorrectHorse", "CorrectHorse"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    cleaned = redact(text)
    assert secret not in cleaned
    assert "REDACTED" in cleaned


def test_context_around_a_secret_is_kept() -> None:
    cleaned = redact("AccountName=nwlogs080613;AccountKey=Zm9vYmFy==;EndpointSuffix=core.windows.net")
    assert cleaned == f"AccountName=nwlogs080613;AccountKey={REDACTED};EndpointSuffix=core.windows.net"
    assert redact("postgres://admin:pw123456@db/app") == f"postgres://admin:{REDACTED}@db/app"


DIAGNOSTICS = [
    "-P INPUT ACCEPT\n-A INPUT -p tcp -m multiport --dports 22 -j f2b-sshd\n-A f2b-sshd -s 203.0.113.47/32 -j REJECT",
    "qdisc tbf 8001: root refcnt 2 rate 5Mbit burst 32Kb lat 50ms",
    "Status for the jail: sshd\n|- Banned IP list:\t203.0.113.47",
    '{"name": "ghost-demo-block-8080", "priority": 150, "access": "Deny", "destinationPortRange": "8080"}',
    "Failed password for invalid user admin from 203.0.113.47 port 51234 ssh2",
    "bantime = 600\nmaxretry = 5",
]


@pytest.mark.parametrize("text", DIAGNOSTICS)
def test_diagnostic_output_is_untouched(text: str) -> None:
    assert redact(text) == text


def test_values_inside_structures_are_redacted() -> None:
    value = {"command": "curl -H 'Authorization: Bearer abcdefgh12345678' http://x", "n": 3, "list": ["password=hunter22"]}
    cleaned = redact_value(value)
    assert "abcdefgh12345678" not in str(cleaned) and "hunter22" not in str(cleaned)
    assert cleaned["n"] == 3


@given(st.text(alphabet=st.characters(codec="ascii", exclude_characters="=:@"), max_size=200))
@settings(max_examples=300, deadline=None)
def test_redaction_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once
