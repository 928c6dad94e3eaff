"""Integer programs (CoH IPP, reservation planner) and their solver backends.

The formulations and the CBC / CP-SAT backends arrive with the integer-program issue; the package
exists now so that the distribution's layout is fixed from the start.
"""
