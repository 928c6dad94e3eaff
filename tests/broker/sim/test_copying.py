"""Copies derived from what attributes hold: each rule of broker.sim.copying on a small object made for it."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from broker.sim.copying import copy_state
from broker.sim.kernel import Kernel, Ticker
from broker.sim.recorder import MemoryRecorder


@dataclass(frozen=True)
class Config:
    tick: float


class Checker:
    """Holds its world, as a validator does, and a count of its own."""

    def __init__(self, world: Any) -> None:
        self.world, self.checked = world, 0


class Model:
    _shared = ("arrival",)

    def __init__(self) -> None:
        self.arrival = [0.0, 10.0, 20.0]  # read only: shared
        self.config, self.recorder, self.name, self.count = Config(10.0), MemoryRecorder(), "m", 3
        self.waiting = [2, 1]
        self.queues = {0: [1, 2], 1: [3]}
        self.pairs = [(0, 1.0), (1, 2.0)]
        self.pools = {0, 1}
        self.kernel = Kernel()
        self.ticker = Ticker(self.kernel, 1, 10.0)
        self.checker = Checker(self)
        self.column = array("d", [1.0, 2.0])
        self.view = np.frombuffer(self.column, dtype=np.float64)
        self.positions = np.arange(3)
        self.positions.flags.writeable = False
        self.start = np.zeros(3)
        self.handlers = (self.on_a, self.on_b)
        self.outside = Checker(None).__init__  # a bound method of an object the model does not hold

    def on_a(self) -> Model:
        return self

    def on_b(self) -> Model:
        return self


def test_read_only_and_immutable_values_and_the_recorder_are_shared() -> None:
    m = Model()
    twin = copy_state(m)
    assert type(twin) is Model and twin is not m
    for name in ("arrival", "config", "recorder", "name", "positions"):
        assert getattr(twin, name) is getattr(m, name), name


def test_containers_are_new_and_containers_inside_them_too() -> None:
    m = Model()
    twin = copy_state(m)
    twin.waiting.append(5)
    twin.queues[0].append(9)
    twin.queues[2] = []
    twin.pools.add(7)
    assert m.waiting == [2, 1] and m.queues == {0: [1, 2], 1: [3]} and m.pools == {0, 1}
    assert twin.pairs == m.pairs and twin.pairs is not m.pairs and twin.pairs[0] is m.pairs[0]  # tuples shared


def test_arrays_are_copied_and_a_view_of_a_column_sees_the_copied_column() -> None:
    m = Model()
    twin = copy_state(m)
    twin.column[0] = 7.0
    twin.start[1] = 4.0
    assert twin.view.tolist() == [7.0, 2.0] and m.view.tolist() == [1.0, 2.0]
    assert m.column.tolist() == [1.0, 2.0] and m.start.tolist() == [0.0, 0.0, 0.0]


def test_handlers_are_bound_to_the_copy_and_back_references_lead_to_it() -> None:
    m = Model()
    twin = copy_state(m)
    assert [h() for h in twin.handlers] == [twin, twin] and [h() for h in m.handlers] == [m, m]
    assert twin.outside is m.outside  # bound to an object the copy does not hold
    assert twin.checker is not m.checker and twin.checker.world is twin and m.checker.world is m
    assert twin.kernel is not m.kernel and twin.ticker.kernel is twin.kernel  # one object reached twice: one copy


def test_objects_with_a_copy_method_are_copied_by_it() -> None:
    m = Model()
    m.kernel.schedule(5.0, 0, "event")
    twin = copy_state(m)
    twin.kernel.schedule(6.0, 0, "other")
    assert len(m.kernel) == 1 and len(twin.kernel) == 2


def test_slots_are_copied_and_an_object_without_attributes_or_copy_is_refused() -> None:
    m = Model()
    twin = copy_state(m)
    twin.ticker.request(20.0)
    assert twin.ticker.at == 20.0 and m.ticker.at == float("inf")
    m.rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="cannot copy a Generator"):
        copy_state(m)


def test_a_view_of_part_of_a_column_is_refused() -> None:
    m = Model()
    m.view = np.frombuffer(m.column, dtype=np.float64, count=1)
    with pytest.raises(TypeError, match=r"part of an array\.array column"):
        copy_state(m)
