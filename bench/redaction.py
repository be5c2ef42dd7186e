"""Redaction bench: the default redactor over the corpus of ``tests/data/secrets.json``.

A secret is caught when it is gone from the redacted text (recall: secrets caught / secrets). A
look-alike is a false positive when the redactor changes its text or reports a kind. The
corpus's secrets are fake, in the real formats; the look-alikes are the strings detectors
confuse with secrets (short prefixes, hashes, placeholders, public keys, code).
"""

from __future__ import annotations

import time
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


def worst_shapes(size: int) -> dict[str, str]:
    """Each detector's worst shape at about ``size`` bytes, and the texts that are a match every
    few bytes (as tests/gates/test_redact.py)."""
    from tests.gates.test_redact import dense_shapes
    from tests.gates.test_redact import worst_shapes as shapes

    return {
        **shapes(size),
        **dense_shapes(size),
        "one trigger word in prose": "password " + "lorem ipsum dolor sit amet " * (size // 27),
    }


def run_shapes(sizes: tuple[int, ...] = (1 << 20, 10 << 20)) -> list[tuple[str, int, float]]:
    """(shape, size in bytes, seconds) for every worst shape at every size."""
    redactor = default_redactor()
    rows = []
    for size in sizes:
        for label, text in worst_shapes(size).items():
            started = time.perf_counter()
            redactor.text(text)
            rows.append((label, len(text.encode()), time.perf_counter() - started))
    return rows


def placement_matrix() -> dict[str, tuple[int, int, int]]:
    """Per placement: (secrets, caught, look-alikes a detector changed)."""
    from tests.gates.test_results import PLACEMENTS, _placed, corpus_cases, leaked, look_alikes

    cases = list(corpus_cases())
    matrix = {}
    for placement in PLACEMENTS:
        caught = sum(not leaked(c.secret, _placed(placement, c.text)[1]) for c in cases)
        false = sum(
            any("was found" in change.detail for change in _placed(placement, text)[0].changes)
            for text in look_alikes()
        )
        matrix[placement] = (len(cases), caught, false)
    return matrix


def print_table() -> None:
    """The tables of ``python -m bench.run --only redaction``."""
    print("| worst shape (detector) | MB | ms | MB/s |")
    print("|---|---:|---:|---:|")
    for label, size, seconds in run_shapes():
        print(
            f"| {label} | {size / 1e6:.1f} | {seconds * 1000:,.0f} | {size / 1e6 / seconds:,.1f} |"
        )
    print()
    print("| placement | secrets | caught | recall | look-alikes changed |")
    print("|---|---:|---:|---:|---:|")
    for placement, (total, caught, false) in placement_matrix().items():
        print(f"| {placement} | {total} | {caught} | {caught / total:.2f} | {false} |")
