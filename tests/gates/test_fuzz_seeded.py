"""The fuzz of `tests.gates.fuzz`, short and seeded, inside CI: the same checks as ``make fuzz``
on a few hundred inputs that are the same every run, and every secret of the corpus in every
placement of `tests.gates.fuzz_secrets`."""

from __future__ import annotations

import pytest

from tests.gates.fuzz import BAD_COUNTS, work
from tests.gates.fuzz_secrets import PLACEMENTS, escaped, every_planting, planted

SEED = 20240612
INPUTS = 600


@pytest.mark.slow
def test_a_seeded_run_of_both_gates_has_no_bad_outcome() -> None:
    summary = work(SEED, seconds=600, inputs=INPUTS)
    assert sum(summary["inputs"].values()) == INPUTS
    bad = {kind: summary["bad"][kind] for kind in BAD_COUNTS}
    assert bad == dict.fromkeys(BAD_COUNTS, 0), summary["examples"]


def test_a_seed_gives_the_same_inputs_every_run() -> None:
    first, second = work(SEED, seconds=600, inputs=50), work(SEED, seconds=600, inputs=50)
    assert first["inputs"] == second["inputs"]
    assert first["outcomes"] == second["outcomes"]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_no_secret_of_the_corpus_reaches_the_model_from(placement: str) -> None:
    cases = [case for case in every_planting() if case.placement == placement]
    escapes = [case.secret.kind for case in cases if escaped(case, planted(case))]
    assert len(cases) >= 30
    assert escapes == []
