"""The placement advisor (``SPEC.md`` §8): run a job on the local cluster or in the cloud.

So far: the features of each job as of its submission, replayed from the trace without leakage
(:mod:`broker.advisor.features`), the k-NN estimator with its uncertainty
(:mod:`broker.advisor.knn`), and predictions as each job is submitted from the labels known by then
(:mod:`broker.advisor.online`), and feature weights, ``k`` and the kernel width by correlation or
by a seeded global search (:mod:`broker.advisor.tuning`), and the decision: speed models, the
cutoff ``C(s)``, saved time and the oracle (:mod:`broker.advisor.decide`), and the paper's protocol
over a trace (:mod:`broker.advisor.evaluate`), with k-NN or gradient boosting
(:mod:`broker.advisor.boosting`). Scheduler promises, weights by global search in the protocol,
sweeps, the notebook and the paper's tables follow.
"""
