"""EC2: tags of given resources read by id, and security groups found by id, name or tag from indexes.

moto 5.2.5 finds an EC2 resource's tags by scanning every tag of the region (TagBackend.describe_tags with a
"resource-id" filter, compiled to a regular expression and matched against every resource id). Every tag filter of
a Describe call (tag:Key, tag-key, tag-value) and every resource a response shows does that once or twice, so
DescribeSecurityGroups with a tag filter costs groups x tags: seconds once an account holds a thousand Services,
where AWS answers in the same time whatever the account holds. DescribeSecurityGroups also tests every group of
the account against the filters, whatever they name.
"""

import re

from . import WILDCARD, applied, counters, exact
from .indexes import TagIndex, arrival_order

def patch_ec2_tags_by_resource_id() -> None:
    """EC2 tags of given resources: read from the tag store's dict by resource id instead of scanning it."""
    from moto.ec2.models.tags import TagBackend
    from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, get_prefix

    scan = TagBackend.describe_tags

    def describe_tags(self, filters=None):  # type: ignore[no-untyped-def]
        ids = filters.get("resource-id") if isinstance(filters, dict) and len(filters) == 1 else None
        if (
            not isinstance(ids, list)
            or not ids
            or not exact(ids)
        ):
            return scan(self, filters)
        wanted = set(ids)
        # The scan's order: resources as the store first saw them, each one's tags as set. One id (every
        # resource's own tags: the hot path) needs no walk at all; several take a walk of the ids only.
        found = [ids[0]] if len(wanted) == 1 else [r for r in list(self.tags) if r in wanted]
        results = []
        for resource_id in found:
            # .get: reading must not add an empty entry to the defaultdict, as the scan does not.
            tags = self.tags.get(resource_id)
            if not tags:
                continue
            resource_type = EC2_PREFIX_TO_RESOURCE.get(get_prefix(resource_id), "")
            for key, value in list(tags.items()):
                results.append(
                    {"resource_id": resource_id, "key": key, "value": value, "resource_type": resource_type}
                )
        return results

    TagBackend.describe_tags = describe_tags  # type: ignore[method-assign]
    applied.append("ec2-tags-by-resource-id")


def patch_security_group_tag_filters() -> None:
    """DescribeSecurityGroups: a group whose tags fail a leading tag filter is turned down from the tag dict."""
    from moto.ec2.models.security_groups import SecurityGroup

    matches_filters = SecurityGroup.matches_filters

    def fails_fast(tags, key, values):  # type: ignore[no-untyped-def]
        # What moto's tag_filter_matches decides for values without wildcards (where its patterns match only
        # themselves), or None when that is not a question a dict answers.
        if not isinstance(values, list) or not all(isinstance(v, str) and not WILDCARD.intersection(v) for v in values):
            return None
        if key.startswith("tag:"):
            return tags.get(key[4:]) not in values
        if key == "tag-key":
            return not any(v in tags for v in values)
        return None

    def fast_matches_filters(self, filters):  # type: ignore[no-untyped-def]
        # moto tries the filters in order and stops at the first that fails, so a failure among the filters
        # before the first one this cannot decide is moto's answer too (errors of later filters included). The
        # filters that pass are left to moto to try again: what it answers for the few groups that pass is its own.
        tags = (self.ec2_backend.tags.get(self.id) if self.id else None) or {}
        for key, values in filters.items():
            fails = fails_fast(tags, key, values)
            if fails is None:
                break
            if fails:
                return False
        return matches_filters(self, filters)

    SecurityGroup.matches_filters = fast_matches_filters  # type: ignore[method-assign]
    applied.append("security-group-tag-filters")



# The SecurityGroup filters moto 5.2.5 matches with aws_api_matches: the value as a pattern where * and ? are
# wildcards and, as it does not escape them, other regular expression characters too. A value of these characters
# only matches itself.
PLAIN_VALUE = re.compile(r"^[A-Za-z0-9_\-:/@=, ]*$")
# Filters whose answer for a group depends on the group alone, and that moto 5.2.5 implements: with any other, the
# scan is kept (an unknown filter is an error moto raises when it tests a group, whichever group that is).
KNOWN_FILTERS = {"group-id", "group-name", "vpc-id", "description", "owner-id", "tag-key", "tag-value"}


def patch_security_group_index() -> None:
    """DescribeSecurityGroups with a filter on group id, group name, tag or tag key: the groups it names come from
    indexes, in moto's order, and only they are tested against the filters."""
    from moto.ec2.models.security_groups import SecurityGroupBackend
    from moto.ec2.models.tags import TagBackend

    # EC2's tags by key and value, kept as moto's tag store changes (its only writers are these three).
    tag_init = TagBackend.__init__

    def __init__(self) -> None:  # type: ignore[no-untyped-def]
        tag_init(self)
        self.tag_index = TagIndex()

    TagBackend.__init__ = __init__  # type: ignore[method-assign]
    for name in ("create_tags", "delete_tags", "delete_tag_keys"):
        reindex_after(TagBackend, name)

    # Where each group stands: its VPC's place among the VPCs, and its place in that VPC's dict.
    ArrivalOrder = arrival_order(dict)
    group_init = SecurityGroupBackend.__init__
    create = SecurityGroupBackend.create_security_group
    describe = SecurityGroupBackend.describe_security_groups

    def group_backend_init(self) -> None:  # type: ignore[no-untyped-def]
        group_init(self)
        # Made empty by moto's __init__ (and reset()): nothing to carry over.
        self.groups = type(self.groups)(ArrivalOrder)
        self.group_vpc: dict[str, str] = {}
        self.groups_by_name: dict[str, dict[str, None]] = {}

    def create_security_group(self, name, description, vpc_id=None, tags=None, force=False, is_default=None):  # type: ignore[no-untyped-def]
        group = create(self, name, description, vpc_id, tags, force, is_default)
        # A group's id, name and VPC never change; a deleted group is left here and found missing when looked up.
        self.group_vpc[group.id] = group.vpc_id
        self.groups_by_name.setdefault(group.name, {})[group.id] = None
        return group

    def describe_security_groups(self, group_ids=None, groupnames=None, filters=None):  # type: ignore[no-untyped-def]
        named = None if group_ids or groupnames or not filters else narrowest(self, filters)
        if named is None:
            return describe(self, group_ids, groupnames, filters)
        counters["security-group-index-answers"] += 1
        vpc_places = {vpc: place for place, vpc in enumerate(list(self.groups))}
        found = []
        for group_id in list(named):
            vpc = self.group_vpc.get(group_id)
            groups = self.groups.get(vpc) if vpc in vpc_places else None
            group = groups.get(group_id) if groups is not None else None
            if group is not None:
                found.append((vpc_places[vpc], groups.place[group_id], group))
        found.sort(key=lambda f: (f[0], f[1]))
        # moto's own tests on what the index named, which holds every group the filters can match.
        return [group for _, _, group in found if group.matches_filters(filters)]

    def narrowest(self, filters):  # type: ignore[no-untyped-def]
        # The fewest groups one filter can match, or None when a filter is not one this knows (or none narrows).
        best = None
        for key, values in filters.items():
            if not (key in KNOWN_FILTERS or key.startswith("tag:")):
                return None
            if key in ("group-id", "group-name"):
                if not isinstance(values, list) or not all(isinstance(v, str) and PLAIN_VALUE.match(v) for v in values):
                    continue
                if key == "group-id":
                    named = dict.fromkeys(values)
                else:
                    named = {}
                    for value in values:
                        named.update(self.groups_by_name.get(value, {}))
            elif (key.startswith("tag:") or key == "tag-key") and exact(values):
                named = {}
                for value in values:
                    named.update(
                        self.tag_index.with_tag(key[4:], [value]) if key != "tag-key" else self.tag_index.with_tag(value, [])
                    )
            else:
                continue
            if best is None or len(named) < len(best):
                best = named
        return best

    SecurityGroupBackend.__init__ = group_backend_init  # type: ignore[method-assign]
    SecurityGroupBackend.create_security_group = create_security_group  # type: ignore[method-assign]
    SecurityGroupBackend.describe_security_groups = describe_security_groups  # type: ignore[method-assign]
    applied.append("security-groups-indexed")


def reindex_after(cls, name: str) -> None:  # type: ignore[no-untyped-def]
    """Wraps TagBackend.<name>(resource_ids, ...) so that each resource it touched is indexed again after it."""
    original = getattr(cls, name)

    def changed(self, resource_ids, *args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return original(self, resource_ids, *args, **kwargs)
        finally:
            # After an error too: moto may have changed some resources before raising.
            for resource_id in resource_ids:
                self.tag_index.reindex(resource_id, self.tags.get(resource_id))

    setattr(cls, name, changed)
