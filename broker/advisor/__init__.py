"""The placement advisor (``SPEC.md`` §8): run a job on the local cluster or in the cloud.

- :mod:`broker.advisor.features`: each job as the site saw it at its submission, replayed from the
  trace without leakage, and when its wait and run time became known.
- :mod:`broker.advisor.knn`: the k-NN estimator (HEOM distance, stable kernel weights, the weighted
  unbiased variance) as scikit-learn estimators; :mod:`broker.advisor.online`: predictions as each
  job is submitted, from the labels known by then; :mod:`broker.advisor.boosting`: gradient boosting
  on the same knowledge bases.
- :mod:`broker.advisor.tuning`: weights by correlation or a seeded global search with ``k`` and the width.
- :mod:`broker.advisor.promises`: each job's conservative-backfilling promise, as a feature.
- :mod:`broker.advisor.decide`: speed models, the cutoff ``C(s)``, saved time and the oracle.
- :mod:`broker.advisor.evaluate`: the paper's protocol over a trace; :mod:`broker.advisor.sweep`:
  its options as sweep cells; :mod:`broker.advisor.plots`: the figures.
"""
