"""What the patches keep beside moto's own stores: dicts that know where each key stands, and tags by key and value."""

import threading
from itertools import count


def arrival_order(base: type) -> type:
    """A dict class like `base` that knows where each key stands in its order (a key set again keeps its place)."""

    class ArrivalOrder(base):  # type: ignore[valid-type,misc]
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__()
            self.place: dict[object, int] = {}
            self.counter = count()
            # moto's server answers on threads: the place and the insertion must happen in one order.
            self.lock = threading.Lock()
            for key, value in dict(*args, **kwargs).items():
                self[key] = value

        def __setitem__(self, key, value):  # type: ignore[no-untyped-def]
            with self.lock:
                if key not in self:
                    self.place[key] = next(self.counter)
                super().__setitem__(key, value)

    return ArrivalOrder


class TagIndex:
    """Resources by tag (key and value) and by tag key, kept by calling `reindex` with a resource's current tags."""

    def __init__(self) -> None:
        self.by_tag: dict[tuple[str, object], dict[str, None]] = {}
        self.by_key: dict[str, dict[str, None]] = {}
        self.indexed: dict[str, dict[str, object]] = {}

    def reindex(self, resource: str, tags: dict | None) -> None:  # type: ignore[type-arg]
        for key, value in self.indexed.pop(resource, {}).items():
            self.by_tag[(key, value)].pop(resource, None)
            self.by_key[key].pop(resource, None)
        now = dict(tags or {})
        for key, value in now.items():
            self.by_tag.setdefault((key, value), {})[resource] = None
            self.by_key.setdefault(key, {})[resource] = None
        if now:
            self.indexed[resource] = now

    def with_tag(self, key: str, values: list) -> dict[str, None]:  # type: ignore[type-arg]
        """Resources with tag `key` set to one of `values`, or with the key at all when `values` is empty."""
        if not values:
            return self.by_key.get(key, {})
        found: dict[str, None] = {}
        for value in values:
            found.update(self.by_tag.get((key, value), {}))
        return found
