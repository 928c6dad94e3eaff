"""Job and VM selection rules, the generic packing loop and the heuristic registry (CoH §3.3)."""
