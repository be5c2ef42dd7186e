"""Smoke tests of the hostile-input and soak benches' own logic, at tiny sizes."""

from __future__ import annotations

import pytest
from bench.hostile import probe

from bench import hostile_shapes, soak


def test_every_detector_has_a_shape_and_each_shape_runs() -> None:
    shapes = hostile_shapes.detector_shapes()
    kinds = {name.split(":", maxsplit=1)[0] for name in shapes}
    assert {d.kind for d in hostile_shapes.default_redactor().detectors} <= kinds
    for name in shapes:
        assert probe("detector", name, 2_000)["outcome"].endswith("redacted")


@pytest.mark.parametrize("name", list(hostile_shapes.WALK_SHAPES))
def test_each_walk_shape_runs_through_its_gate(name: str) -> None:
    got = probe("walk", name, 4_000)
    assert got["size"] > 0
    assert got["outcome"]


def _samples(values: list[float]) -> list[soak.Sample]:
    return [soak.Sample(10.0 * i, {"ours": int(v * 1e6)}) for i, v in enumerate(values)]


def test_the_soak_verdict_compares_the_last_third_with_the_warm_up() -> None:
    flat = _samples([80, 100, 101, 99, 100, 102, 100, 101, 99, 100, 104, 103, 102])
    growing = _samples([80, 100, 101, 99, 110, 120, 130, 140, 150, 160, 170, 180, 190])
    assert soak.verdict(flat, "ours")[2]
    assert not soak.verdict(growing, "ours")[2]
    assert soak.warm_window(1800) == (120.0, 300.0)
