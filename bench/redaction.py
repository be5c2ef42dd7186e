"""Redaction bench: the default redactor over the corpus of ``tests/data/secrets.json``.

A secret is caught when it is gone from the redacted text (recall: secrets caught / secrets). A
look-alike is a false positive when the redactor changes its text or reports a kind. The
corpus's secrets are fake, in the real formats; the look-alikes are the strings detectors
confuse with secrets (short prefixes, hashes, placeholders, public keys, code).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemawire._json import load_file
from schemawire.gates.redact import Redactor, default_redactor

CORPUS = Path(__file__).parent.parent / "tests/data/secrets.json"


def report(path: Path = CORPUS, redactor: Redactor | None = None) -> dict[str, Any]:
    """Counts over the corpus at ``path``: ``secrets``, ``look_alikes``, ``caught``, ``missed``
    (each ``{"kind", "text"}``), ``false_positives`` (each ``{"text", "kinds", "redacted"}``),
    ``recall`` and ``false_positive_rate``."""
    redactor = redactor or default_redactor()
    corpus: Any = load_file(path)
    secrets, look_alikes = corpus["secrets"], corpus["look_alikes"]
    missed = [
        {"kind": case["kind"], "text": case["text"]}
        for case in secrets
        if case["secret"] in redactor.text(case["text"])[0]
    ]
    false_positives = []
    for case in look_alikes:
        redacted, kinds = redactor.text(case["text"])
        if kinds or redacted != case["text"]:
            false_positives.append({"text": case["text"], "kinds": kinds, "redacted": redacted})
    caught = len(secrets) - len(missed)
    return {
        "secrets": len(secrets),
        "look_alikes": len(look_alikes),
        "caught": caught,
        "missed": missed,
        "false_positives": false_positives,
        "recall": caught / len(secrets) if secrets else 1.0,
        "false_positive_rate": len(false_positives) / len(look_alikes) if look_alikes else 0.0,
    }
