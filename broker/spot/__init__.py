"""Jobs with deadlines on spot instances (Wu et al., "Can't Be Late", NSDI 2024).

:mod:`~broker.spot.world` is the world on the kernel (jobs, zones as failure domains, preemptions,
launches and decisions as events); :mod:`~broker.spot.policies` the policies (on-demand, greedy,
Uniform Progress, failover, omniscient); :mod:`~broker.spot.optimum` the omniscient optimum (a
dynamic program over ticks); :mod:`~broker.spot.simulate` runs from random starts;
:mod:`~broker.spot.sweep` the comparison over slack; :mod:`~broker.spot.env` ``cloudbroker/Spot-v0``.
The market itself (timelines, prices, notice, billing) is data in :mod:`broker.pricing.spot`.
"""
