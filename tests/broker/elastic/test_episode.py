"""The episode loop (:mod:`broker.elastic.episode`): an episode has no decision before it starts."""

from __future__ import annotations

from broker.elastic.episode import Episode
from broker.elastic.world import ElasticWorld, PoolConfig
from tests.broker.elastic.test_world import THREE


def test_no_decision_before_the_start() -> None:
    episode = Episode(ElasticWorld(THREE, PoolConfig(1)), lam=0.5)
    assert episode.decision is None
    first = episode.start()
    assert first is not None and episode.decision is first and first.queued.tolist() == [0]
