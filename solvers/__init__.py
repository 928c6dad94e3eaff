"""A generic MILP layer: a backend-neutral model, CBC (PuLP) and OR-Tools CP-SAT behind one interface.

Time or work limits, statuses read from everything a backend says, warm starts. It knows nothing of
clouds or jobs: CoH's integer program is built in :mod:`broker.coh.ipp`, the reservation planner's
in :mod:`broker.planning.planner`.
"""
