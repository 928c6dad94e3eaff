"""Reserved-instance planning (``SPEC.md`` §4): demand from a CoH replay and the planner."""
