"""Copies derived from what attributes hold: each rule of broker.sim.copying on a small object made for it."""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from broker.sim import copying
from broker.sim.copying import copy_state
from broker.sim.kernel import Kernel, Ticker
from broker.sim.recorder import MemoryRecorder


@pytest.fixture(autouse=True)
def rules_worked_out_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test works out the rules of its classes again: the caches a process keeps would hide them."""
    monkeypatch.setattr(copying, "_RULES", {})
    monkeypatch.setattr(copying, "_LAYOUTS", {})
    monkeypatch.setattr(copying, "_KEPT", set(copying._ALWAYS_KEPT))


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
    with pytest.raises(TypeError, match=r"^cannot copy a view of part of an array\.array column$"):
        copy_state(m)


# --- the containers' rules, one by one -------------------------------------------------------------------------------

class Holder:
    """One attribute, ``value``, copied by the rule of its kind."""

    def __init__(self, value: Any) -> None:
        self.value = value


def copied(value: Any) -> Any:
    return copy_state(Holder(value)).value


@pytest.mark.parametrize("kind", [list, deque])
@pytest.mark.parametrize("where", ["first", "last"])
def test_a_list_or_deque_of_lists_copies_its_lists_found_at_either_end(kind: type, where: str) -> None:
    outer = kind([[1], 7, 8]) if where == "first" else kind([7, 8, [3]])
    twin = copied(outer)
    assert type(twin) is kind and list(twin) == list(outer) and twin is not outer
    nested = [k for k, v in enumerate(outer) if isinstance(v, list)]
    for k in nested:
        assert twin[k] == outer[k] and twin[k] is not outer[k]  # a new inner list, the same numbers
        twin[k].append(9)
        assert outer[k][-1] != 9
    shared = [k for k, v in enumerate(outer) if not isinstance(v, list)]
    for k in shared:
        assert twin[k] is outer[k]


@pytest.mark.parametrize("kind", [list, deque])
def test_a_flat_list_or_deque_is_copied_whole_and_keeps_its_elements(kind: type) -> None:
    pairs = kind([(0, 1.0), (1, 2.0)])
    twin = copied(pairs)
    assert type(twin) is kind and list(twin) == list(pairs) and twin is not pairs
    assert all(a is b for a, b in zip(twin, pairs, strict=True))
    twin.append((2, 3.0))
    assert len(pairs) == 2
    assert copied(kind()) == kind() and copied(kind()) is not None


def test_a_deque_keeps_its_maximum_length_when_its_elements_are_copied() -> None:
    ring = deque([[1], [2]], maxlen=2)
    twin = copied(ring)
    assert twin.maxlen == 2 and list(twin) == [[1], [2]] and twin[0] is not ring[0]
    twin.append([3])
    assert list(ring) == [[1], [2]] and list(twin) == [[2], [3]]


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_dict_of_lists_copies_the_lists_found_at_either_end_of_its_values(where: str) -> None:
    queues = {0: [1, 2], 1: 5, 2: 6} if where == "first" else {0: 5, 1: 6, 2: [3]}
    twin = copied(queues)
    assert twin == queues and twin is not queues
    for k, v in queues.items():
        if isinstance(v, list):
            assert twin[k] is not v
            twin[k].append(9)
            assert v[-1] != 9
        else:
            assert twin[k] is v
    assert copied({}) == {}


def test_an_element_reached_twice_is_copied_once() -> None:
    shared = [1, 2]
    twin = copied([shared, shared])
    assert twin[0] is twin[1] and twin[0] is not shared


def test_a_tuple_is_kept_unless_an_element_had_to_be_copied() -> None:
    flat = (1, "a", 2.0)
    assert copied(flat) is flat
    column = array("d", [1.0, 2.0])
    pair = (column, 3)
    twin = copied(pair)
    assert twin is not pair and twin[0] is not column and twin[0] == column and twin[1] == 3


def test_a_view_of_part_of_a_column_is_refused_and_a_read_only_array_is_shared() -> None:
    column = array("d", [1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"^cannot copy a view of part of an array\.array column$"):
        copied(np.frombuffer(column, dtype=np.float64, count=2))
    whole = copied(np.frombuffer(column, dtype=np.float64))
    assert whole.tolist() == [1.0, 2.0, 3.0] and isinstance(whole.base, memoryview)
    assert whole.base.obj is not column
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    assert copied(frozen) is frozen
    plain = np.arange(3.0)
    assert copied(plain) is not plain and copied(plain).tolist() == [0.0, 1.0, 2.0]


class NeedsAnArgument:
    def __init__(self) -> None:
        self.n = 1

    def copy(self, deep: bool) -> NeedsAnArgument:  # not a copy() the helper can call
        raise AssertionError("not to be called")


class CopiesItself:
    calls = 0

    def copy(self, deep: bool = True) -> CopiesItself:
        CopiesItself.calls += 1
        return CopiesItself()


def test_an_objects_own_copy_is_used_only_when_it_takes_no_argument() -> None:
    twin = copied(NeedsAnArgument())
    assert isinstance(twin, NeedsAnArgument) and twin.n == 1  # copied attribute by attribute instead
    before = CopiesItself.calls
    assert isinstance(copied(CopiesItself()), CopiesItself) and CopiesItself.calls == before + 1


def test_what_cannot_be_copied_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="cannot copy a generator"):
        copied(x for x in range(3))


@dataclass(frozen=True, slots=True)
class Frozen:
    tick: float


class Slotted:
    __slots__ = ("__weakref__", "items", "label")

    def __init__(self) -> None:
        self.items, self.label = [1, 2], "s"


class Recorded(MemoryRecorder):
    pass


def test_frozen_records_enums_numpy_scalars_and_recorders_are_shared_and_their_class_remembered() -> None:
    for value in (Frozen(1.0), Config(2.0), np.float64(3.0), np.int64(4), Recorded()):
        assert copied(value) is value, type(value)
    assert Frozen in copying._KEPT and Recorded in copying._KEPT


def test_an_object_with_slots_is_copied_slot_by_slot_and_an_unset_slot_stays_unset() -> None:
    thing = Slotted()
    twin = copied(thing)
    assert type(twin) is Slotted and twin.items == [1, 2] and twin.items is not thing.items and twin.label == "s"
    del thing.label
    again = copied(thing)
    assert not hasattr(again, "label") and again.items == [1, 2]


class Keeps:
    _shared = ("table",)
    __slots__ = ("mine", "table")

    def __init__(self) -> None:
        self.table, self.mine = [1, 2], [3]


def test_a_name_listed_in_shared_is_shared_in_a_slot_as_in_a_dict() -> None:
    thing = Keeps()
    twin = copied(thing)
    assert twin.table is thing.table and twin.mine is not thing.mine and twin.mine == [3]


class OneSlot:
    __slots__ = "items"  # a single name, as a string

    def __init__(self) -> None:
        self.items = [1]


def test_a_single_slot_named_by_a_string_is_copied() -> None:
    thing = OneSlot()
    twin = copied(thing)
    assert twin.items == [1] and twin.items is not thing.items
