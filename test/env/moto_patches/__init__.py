"""Patches to moto 5.2.5's lookups, applied by test/env/moto_server.py: what each applied and how often indexes answered."""

applied: list[str] = []
# How many times an index answered instead of moto's scan: tests read them to know that what they compared with a
# plain moto was the index's answer.
counters = {"elbv2-index-answers": 0, "security-group-index-answers": 0}
# moto matches filter values as shell-style patterns (fnmatch.translate, anchored at both ends, case-sensitive);
# a value with none of these characters matches exactly one string: itself.
WILDCARD = set("*?[]\\")


def exact(values: object) -> bool:
    """A filter's values that each match only themselves as tag patterns."""
    return isinstance(values, list) and all(isinstance(v, str) and not WILDCARD.intersection(v) for v in values)
