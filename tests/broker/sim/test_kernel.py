"""The kernel: same-instant order, cancel, pause and resume, run(until), copies, ticks that skip empty ones."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.sim.kernel import Kernel, Ticker


class Log:
    """A world of three kinds that writes down what it handles; kind 1 pauses when told to."""

    def __init__(self, pause_on: object = None) -> None:
        self.seen: list[tuple[float, int, Any]] = []
        self.pause_on = pause_on
        self.handlers = [self._make(k) for k in range(3)]

    def _make(self, kind: int) -> Any:
        def handle(t: float, payload: Any) -> bool:
            self.seen.append((t, kind, payload))
            return payload == self.pause_on
        return handle


def test_same_instant_events_go_by_kind_then_by_scheduling_order() -> None:
    k, w = Kernel(), Log()
    k.schedule(5.0, 2, "deadline")
    k.schedule(5.0, 1, "tick-a")
    k.schedule(5.0, 0, "departure")
    k.schedule(5.0, 1, "tick-b")
    k.schedule(4.0, 2, "earlier")
    assert k.run(w.handlers) is False
    assert w.seen == [(4.0, 2, "earlier"), (5.0, 0, "departure"), (5.0, 1, "tick-a"), (5.0, 1, "tick-b"),
                      (5.0, 2, "deadline")]
    assert k.now == 5.0 and k.popped == 5 and len(k) == 0


def test_a_handler_may_schedule_at_the_current_instant_but_not_before() -> None:
    k = Kernel()
    seen: list[str] = []

    def first(t: float, _: Any) -> None:
        seen.append("first")
        k.schedule(t, 0, None)  # same instant, same kind: after everything already pending at (t, 0)

    handlers = [lambda t, p: seen.append(p), first]
    k.schedule(1.0, 1, None)
    k.schedule(1.0, 0, "dep")
    k.run(handlers)
    assert seen == ["dep", "first", None]
    with pytest.raises(ValueError, match="before the current time"):
        k.schedule(0.5, 0)


def test_cancelled_events_are_skipped_but_counted() -> None:
    k, w = Kernel(), Log()
    a = k.schedule(1.0, 0, "a")
    k.schedule(2.0, 0, "b")
    k.cancel(a)
    assert k.peek() == 2.0 and k.popped == 1
    k.run(w.handlers)
    assert w.seen == [(2.0, 0, "b")] and k.popped == 2


def test_pause_and_resume_at_a_decision_point() -> None:
    k, w = Kernel(), Log(pause_on="decide")
    for t, kind, p in [(1.0, 0, "x"), (2.0, 1, "decide"), (2.0, 2, "after"), (3.0, 0, "y")]:
        k.schedule(t, kind, p)
    assert k.run(w.handlers) is True
    assert k.now == 2.0 and [s[2] for s in w.seen] == ["x", "decide"]
    assert k.run(w.handlers) is False
    assert [s[2] for s in w.seen] == ["x", "decide", "after", "y"]


def test_run_until_handles_events_at_until_and_stops_the_clock_there() -> None:
    k, w = Kernel(), Log()
    for t in (1.0, 5.0, 5.0, 9.0):
        k.schedule(t, 0, t)
    assert k.run(w.handlers, until=5.0) is False
    assert [s[0] for s in w.seen] == [1.0, 5.0, 5.0] and k.now == 5.0
    assert k.run(w.handlers, until=7.5) is False
    assert k.now == 7.5 and len(w.seen) == 3
    k.run(w.handlers)
    assert k.now == 9.0 and len(w.seen) == 4


def test_run_until_the_current_time_is_allowed_and_handles_what_is_due_now() -> None:
    k, w = Kernel(), Log()
    k.schedule(5.0, 0, "a")
    k.run(w.handlers, until=5.0)
    k.schedule(5.0, 0, "b")  # scheduled at the current instant, after the clock reached it
    assert k.run(w.handlers, until=5.0) is False  # until == now: not "before the current time"
    assert [s[2] for s in w.seen] == ["a", "b"] and k.now == 5.0


def test_a_copy_runs_on_its_own() -> None:
    k, w = Kernel(), Log()
    for t in (1.0, 2.0, 3.0):
        k.schedule(t, 0, t)
    k.run(w.handlers, until=1.0)
    twin, w2 = k.copy(), Log()
    twin.schedule(2.5, 1, "only in the copy")
    twin.run(w2.handlers)
    k.run(w.handlers)
    assert [s[2] for s in w.seen] == [1.0, 2.0, 3.0]
    assert [s[2] for s in w2.seen] == [2.0, "only in the copy", 3.0]
    assert twin.popped == k.popped + 1


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 2)), max_size=40))
def test_events_come_out_sorted_by_time_kind_and_scheduling_order(events: list[tuple[int, int]]) -> None:
    k, w = Kernel(), Log()
    for i, (t, kind) in enumerate(events):
        k.schedule(float(t), kind, i)
    k.run(w.handlers)
    expected = sorted(((float(t), kind, i) for i, (t, kind) in enumerate(events)))
    assert w.seen == expected


def test_ticker_grid_skips_empty_ticks_and_keeps_the_earliest_request() -> None:
    k = Kernel()
    ticks: list[float] = []
    ticker = Ticker(k, 0, 10.0)

    def tick(t: float, _: Any) -> None:
        ticker.fired(t)
        ticks.append(t)
        if t == 10.0:
            ticker.request(t)  # the same instant again: the next grid point, never the same tick twice

    ticker.request(3.0)      # -> 10
    ticker.request(25.0)     # later than the pending one: ignored
    assert ticker.at == 10.0
    k.run([tick])
    assert ticks == [10.0, 20.0]
    ticker.request(55.0)     # -> 60
    ticker.request(41.0)     # earlier: replaces it (-> 50)
    k.run([tick])
    assert ticks == [10.0, 20.0, 50.0]
    assert k.popped == 4     # the replaced tick at 60 was popped, not handled
    assert ticker.grid(50.0) == 60.0 and ticker.grid(math.inf) == math.inf


def test_ticker_period_must_be_positive() -> None:
    with pytest.raises(ValueError, match="period"):
        Ticker(Kernel(), 0, 0.0)


def test_settle_runs_once_after_the_last_event_of_each_instant() -> None:
    k, w = Kernel(), Log()
    settled: list[float] = []
    for t, kind in [(1.0, 0), (1.0, 2), (1.0, 1), (3.0, 0), (5.0, 1)]:
        k.schedule(t, kind, t)
    hidden = k.schedule(3.0, 2, "cancelled")
    k.cancel(hidden)

    def settle(t: float) -> None:
        settled.append(t)
        if t == 1.0 and settled.count(1.0) == 1:
            k.schedule(1.0, 0, "again")  # opens a second batch at the same instant

    k.run(w.handlers, settle=settle)
    assert [s[2] for s in w.seen] == [1.0, 1.0, 1.0, "again", 3.0, 5.0]
    assert settled == [1.0, 1.0, 3.0, 5.0]  # the cancelled event at 3 does not hide the instant's end
    assert k.popped == 7


def test_run_until_before_now_is_refused_and_so_is_a_nan_time() -> None:
    k = Kernel()
    k.schedule(5.0, 0)
    k.run([lambda t, p: None])
    with pytest.raises(ValueError, match="before the current time"):
        k.run([lambda t, p: None], until=4.0)
    with pytest.raises(ValueError, match="before the current time"):
        k.schedule(math.nan, 0)


def test_a_new_kernel_starts_at_zero_and_refuses_negative_times() -> None:
    k = Kernel()
    assert k.now == 0.0 and k.popped == 0 and len(k) == 0
    with pytest.raises(ValueError, match="before the current time"):
        k.schedule(-0.5, 0)
    assert Kernel(start=7.0).now == 7.0


def test_peek_without_cancellations_is_the_earliest_time_and_inf_when_empty() -> None:
    k = Kernel()
    assert k.peek() == math.inf
    k.schedule(3.0, 0, "c")
    k.schedule(1.0, 2, "a")  # kind and payload differ from the time: peek reads the time
    k.schedule(2.0, 1, "b")
    assert k.peek() == 1.0 and k.popped == 0 and len(k) == 3


def test_peek_after_a_cancellation_is_the_next_live_event_not_the_last() -> None:
    k = Kernel()
    first = k.schedule(1.0, 0)
    k.schedule(2.0, 0)
    k.schedule(3.0, 0)
    k.cancel(first)
    assert k.peek() == 2.0 and k.popped == 1 and len(k) == 2


def test_peek_skips_cancelled_events_by_their_id_not_their_kind_or_payload() -> None:
    # a's kind and payload are b's id: dropping the cancelled a must not revive the cancelled b
    k, w = Kernel(), Log()
    b = k.schedule(2.0, 0, "b")
    k.schedule(3.0, 0, "c")
    a = k.schedule(1.0, b, b)
    k.cancel(a)
    k.cancel(b)
    assert k.peek() == 3.0 and k.popped == 2
    k.run(w.handlers)
    assert w.seen == [(3.0, 0, "c")]


def test_a_cancelled_head_kind_is_not_taken_for_an_id() -> None:
    # the cancelled event (id 0) has kind 2; the live one has kind 0 = the cancelled id
    k = Kernel()
    k.cancel(k.schedule(1.0, 2))  # id 0 on a new kernel
    k.schedule(2.0, 0)
    assert k.peek() == 2.0


def test_run_skips_a_cancelled_event_and_goes_on_to_later_ones() -> None:
    k, w = Kernel(), Log()
    k.cancel(k.schedule(1.0, 0, "gone"))
    k.schedule(2.0, 0, "kept")
    k.schedule(3.0, 1, "later")
    assert k.run(w.handlers) is False
    assert [s[2] for s in w.seen] == ["kept", "later"] and k.now == 3.0 and k.popped == 3


def test_settle_drops_cancelled_events_of_the_instant_by_id() -> None:
    # x is handled at 1; y, cancelled, at the same instant, has z's id as its kind and payload; z is cancelled
    # at 2: dropping y before the settle must not revive z
    k, w = Kernel(), Log()
    settled: list[float] = []
    z = k.schedule(2.0, 2, "z")
    k.schedule(1.0, 0, "x")
    y = k.schedule(1.0, z, z)
    k.schedule(3.0, 0, "w")
    k.cancel(y)
    k.cancel(z)
    k.run(w.handlers, settle=settled.append)
    assert [s[2] for s in w.seen] == ["x", "w"]
    assert settled == [1.0, 3.0] and k.popped == 4


def test_ticker_accepts_a_period_below_one_second() -> None:
    ticker = Ticker(Kernel(), 0, 0.5)
    assert ticker.grid(0.7) == 1.0 and ticker.grid(1.0) == 1.0


def test_ticker_request_at_the_pending_grid_point_keeps_the_pending_tick() -> None:
    k = Kernel()
    ticker = Ticker(k, 0, 10.0)
    ticks: list[float] = []

    def tick(t: float, _: Any) -> None:
        ticker.fired(t)
        ticks.append(t)

    ticker.request(3.0)   # -> 10
    ticker.request(7.0)   # -> 10 as well: nothing to replace
    assert ticker.at == 10.0 and len(k) == 1
    k.run([tick])
    assert ticks == [10.0] and k.popped == 1


def test_a_ticker_copy_keeps_its_last_tick_and_its_pending_one() -> None:
    k = Kernel()
    ticker = Ticker(k, 0, 10.0)
    fresh = ticker.copy(k.copy())  # a ticker that never ticked copies too
    assert (fresh.last, fresh.at, fresh.period, fresh.kind) == (-math.inf, math.inf, 10.0, 0)
    ticks: list[tuple[str, float]] = []

    def on(name: str, which: Any) -> Any:
        def tick(t: float, _: Any) -> None:
            which().fired(t)
            ticks.append((name, t))
        return tick

    ticker.request(3.0)
    k.run([on("a", lambda: ticker)], until=10.0)
    ticker.request(25.0)  # -> 30
    k2 = k.copy()
    twin = ticker.copy(k2)
    assert twin is not ticker and twin.kernel is k2
    assert (twin.last, twin.at, twin.period, twin.kind) == (10.0, 30.0, 10.0, 0)
    assert twin.grid(10.0) == 20.0  # after the last tick
    twin.request(11.0)  # -> 20, earlier than 30: replaces the pending tick in the copy's kernel only
    k2.run([on("b", lambda: twin)])
    k.run([on("a", lambda: ticker)])
    assert ticks == [("a", 10.0), ("b", 20.0), ("a", 30.0)]


def test_peek_when_every_pending_event_is_cancelled_is_inf() -> None:
    k = Kernel()
    k.cancel(k.schedule(1.0, 0))
    k.cancel(k.schedule(2.0, 1))
    assert k.peek() == math.inf and k.popped == 2 and len(k) == 0


def test_cancelled_ids_are_forgotten_once_their_events_are_popped() -> None:
    # a cancelled id is kept only while its event is pending: the run that pops it drops it (no growing set)
    k, w = Kernel(), Log()
    k.cancel(k.schedule(1.0, 0, "gone"))
    k.schedule(2.0, 0, "kept")
    k.cancel(k.schedule(2.0, 1, "gone too"))  # dropped by the settle of the instant 2
    last = k.schedule(4.0, 0, "gone at the end")
    k.cancel(last)
    k.run(w.handlers, until=3.0, settle=lambda t: None)
    assert [s[2] for s in w.seen] == ["kept"] and k._cancelled == {last} and k.popped == 3
    k.run(w.handlers)
    assert not k._cancelled and k.popped == 4 and len(k) == 0


def test_a_ticker_cancels_only_a_pending_tick() -> None:
    # a request after a tick was handled (or before any) has nothing to cancel: no id of a handled tick is kept
    k = Kernel()
    ticker = Ticker(k, 0, 10.0)
    ticks: list[float] = []

    def tick(t: float, _: Any) -> None:
        ticker.fired(t)
        ticks.append(t)

    ticker.request(3.0)   # -> 10, nothing pending before it
    assert not k._cancelled
    k.run([tick])
    ticker.request(12.0)  # -> 20; the tick at 10 was handled, not pending
    assert not k._cancelled and ticker.at == 20.0
    ticker.request(5.0)   # -> 20 again (after the last tick): kept
    ticker.request(0.0)
    assert not k._cancelled and len(k) == 1
    k.run([tick])
    assert ticks == [10.0, 20.0] and k.popped == 2 and not k._cancelled


def test_ticker_request_of_no_time_schedules_nothing_and_keeps_a_pending_tick() -> None:
    k = Kernel()
    ticker = Ticker(k, 0, 10.0)
    ticker.request(math.inf)
    assert ticker.at == math.inf and len(k) == 0
    ticker.request(3.0)  # -> 10
    ticker.request(math.inf)
    assert ticker.at == 10.0 and len(k) == 1 and k.peek() == 10.0
