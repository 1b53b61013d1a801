"""moto's server with its tag lookups served from indexes: those moto already keeps, and one of ELBv2's tags.

Started by test/harness/awsEmulator.ts with the python of moto's virtualenv, with moto_server's arguments.

moto 5.2.5 finds an EC2 resource's tags by scanning every tag of the region (TagBackend.describe_tags with a
"resource-id" filter, compiled to a regular expression and matched against every resource id). Every tag
filter of a Describe call (tag:Key, tag-key, tag-value) and every resource a response shows does that once or
twice, so DescribeSecurityGroups with a tag filter costs groups x tags: seconds once an account holds a thousand
Services, where AWS answers in the same time whatever the account holds. Tagging GetResources walks every
resource of every service, EC2's included when only load balancers are asked for, and makes a copy of each one's
tags to test them: finding one Service's load balancer and target groups costs every load balancer and target
group of the account.

The patches below change where the answer comes from, never what it is: the same results in the same order. They
are written against moto 5.2.5 (test/env/requirements-moto.txt pins it); with any other version none is applied,
the server is moto's own, and test/integration/aws/motoIndex.test.ts fails to say the patches need a look.

GET /portico-moto/patches answers with the patches applied, so a test can tell this server from a plain one, and
with how often the ELBv2 index answered.
PORTICO_MOTO_PLAIN=1 applies none (to measure moto without them: test/env/motoScaling.ts --plain).
"""

import json
import os
import sys

import moto

PATCHED_VERSION = "5.2.5"
applied: list[str] = []
# How many times the ELBv2 index answered a GetResources walk instead of moto's walk: tests read it to know that
# what they compared with a plain moto was the index's answer.
counters = {"elbv2-index-answers": 0}
# moto matches filter values as shell-style patterns (fnmatch.translate, anchored at both ends, case-sensitive);
# a value with none of these characters matches exactly one string: itself.
WILDCARD = set("*?[]\\")


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
            or not all(isinstance(i, str) and not WILDCARD.intersection(i) for i in ids)
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


def patch_elbv2_indexes() -> None:
    """ELBv2: a tag store that keeps every resource under each tag it has, and dicts that know their order."""
    from collections import OrderedDict
    from itertools import count

    from moto.elbv2.models import ELBv2Backend
    from moto.utilities.tagging_service import TaggingService

    class ArrivalOrder(OrderedDict):  # type: ignore[type-arg]
        """moto's dict of load balancers or target groups, knowing where each key stands in its order."""

        def __init__(self) -> None:
            super().__init__()
            self.place: dict[str, int] = {}
            self.counter = count()

        def __setitem__(self, key, value):  # type: ignore[no-untyped-def]
            # A new key goes to the end of the order; a key set again keeps its place, as in any dict.
            if key not in self:
                self.place[key] = next(self.counter)
            super().__setitem__(key, value)

    class IndexedTags(TaggingService):
        """moto's tag store, with each resource listed under each tag (key and value) and each key it has."""

        def __init__(self) -> None:
            super().__init__()
            self.by_tag: dict[tuple[str, object], dict[str, None]] = {}
            self.by_key: dict[str, dict[str, None]] = {}
            self.indexed: dict[str, dict[str, object]] = {}

        def reindex(self, arn: str) -> None:
            for key, value in self.indexed.pop(arn, {}).items():
                self.by_tag[(key, value)].pop(arn, None)
                self.by_key[key].pop(arn, None)
            now = dict(self.tags.get(arn) or {})
            for key, value in now.items():
                self.by_tag.setdefault((key, value), {})[arn] = None
                self.by_key.setdefault(key, {})[arn] = None
            if now:
                self.indexed[arn] = now

        # Every way the store's tags change (copy_tags goes through tag_resource).
        def tag_resource(self, arn, tags):  # type: ignore[no-untyped-def]
            super().tag_resource(arn, tags)
            self.reindex(arn)

        def untag_resource_using_names(self, arn, tag_names):  # type: ignore[no-untyped-def]
            super().untag_resource_using_names(arn, tag_names)
            self.reindex(arn)

        def untag_resource_using_tags(self, arn, tags):  # type: ignore[no-untyped-def]
            super().untag_resource_using_tags(arn, tags)
            self.reindex(arn)

        def delete_all_tags_for_resource(self, arn):  # type: ignore[no-untyped-def]
            super().delete_all_tags_for_resource(arn)
            self.reindex(arn)

        def holding(self, tag_filter) -> dict[str, None]:  # type: ignore[no-untyped-def]
            """What one GetResources tag filter can match: resources with its key, and one of its values if given."""
            values = tag_filter.get("Values") or []
            if not values:
                return self.by_key.get(tag_filter["Key"], {})
            found: dict[str, None] = {}
            for value in values:
                found.update(self.by_tag.get((tag_filter["Key"], value), {}))
            return found

    init = ELBv2Backend.__init__

    def __init__(self, region_name, account_id):  # type: ignore[no-untyped-def]
        init(self, region_name, account_id)
        # moto's __init__ (reset() too) makes them empty, so there is nothing yet to carry over.
        self.load_balancers = ArrivalOrder()
        self.target_groups = ArrivalOrder()
        self.tagging_service = IndexedTags()

    ELBv2Backend.__init__ = __init__  # type: ignore[method-assign]
    ELBv2Backend.tags_indexed = True  # type: ignore[attr-defined]


def patch_tagging_walk() -> None:
    """GetResources: EC2 is not walked when no EC2 type is asked for; ELBv2's resources with a tag come from the
    index of patch_elbv2_indexes."""
    from moto.core.resource_tagging import TaggedResource, make_tag_matcher, match_resource_type
    from moto.ec2.models import EC2Backend
    from moto.elbv2.models import ELBv2Backend
    from moto.resourcegroupstaggingapi import models

    def _get_resources_generator(self, tag_filters=None, resource_type_filters=None, resource_arn_list=None):  # type: ignore[no-untyped-def]
        # moto 5.2.5's ResourceGroupsTaggingAPIBackend._get_resources_generator: the same backends in the same
        # order, and for each the same resources in the same order, put to the same tests (in `passes`).
        tag_matcher = make_tag_matcher(tag_filters)
        for backend in models.iter_taggable_backends(self.account_id, self.region_name):
            if isinstance(backend, EC2Backend) and not asks_for_ec2(resource_type_filters):
                continue
            indexed = elbv2_by_index(backend, tag_filters) if isinstance(backend, ELBv2Backend) else None
            for resource in backend.iter_tagged_resources() if indexed is None else indexed:
                if passes(resource, tag_matcher, resource_type_filters, resource_arn_list):
                    yield resource

    def asks_for_ec2(resource_type_filters) -> bool:  # type: ignore[no-untyped-def]
        # match_resource_type takes a filter as a service ("ec2") or a type ("ec2:security-group"), and every
        # type EC2's iter_tagged_resources yields is "ec2:...": with filters naming neither, none of its
        # resources can match. No filter matches every type.
        return not resource_type_filters or any(f == "ec2" or f.startswith("ec2:") for f in resource_type_filters)

    def elbv2_by_index(backend, tag_filters):  # type: ignore[no-untyped-def]
        # The resources the narrowest tag filter names, in the order of ELBv2's iter_tagged_resources (load
        # balancers, then target groups, each as they arrived), made as it makes them. None, to walk instead, when
        # there is no tag filter or the narrowest names many: the walk is as quick then, and stops at a page's end.
        tags = backend.tagging_service
        if not tag_filters or not getattr(backend, "tags_indexed", False):
            return None
        narrowest = min((tags.holding(f) for f in tag_filters), key=len)
        if len(narrowest) * 8 > len(backend.load_balancers) + len(backend.target_groups):
            return None
        counters["elbv2-index-answers"] += 1
        found = []
        for arn in list(narrowest):
            if arn in backend.load_balancers:
                found.append((0, backend.load_balancers.place[arn], arn))
            elif arn in backend.target_groups:
                found.append((1, backend.target_groups.place[arn], arn))
        return [
            TaggedResource(
                arn=arn,
                tags=tags.get_tag_dict_for_resource(arn),
                resource_type="elasticloadbalancing:targetgroup" if kind else "elasticloadbalancing:loadbalancer",
                extra={} if kind else {"include_untagged": True},
            )
            for kind, _, arn in sorted(found)
        ]

    def passes(resource, tag_matcher, resource_type_filters, resource_arn_list) -> bool:  # type: ignore[no-untyped-def]
        # The walk's tests for one resource, in its order (its comments on untagged resources apply here too).
        if not resource.tags and not resource.extra.get("include_untagged"):
            return False
        if not match_resource_type(resource.resource_type, resource_type_filters):
            return False
        if not tag_matcher(resource.tags):
            return False
        return not (resource_arn_list and resource.arn not in resource_arn_list)

    models.ResourceGroupsTaggingAPIBackend._get_resources_generator = _get_resources_generator  # type: ignore[method-assign]
    applied.append("tagging-skips-ec2-for-other-types")
    applied.append("elbv2-tags-indexed")


def answer_patches_applied() -> None:
    """GET /portico-moto/patches: which patches this server runs with."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    dispatch = DomainDispatcherApplication.__call__

    def __call__(self, environ, start_response):  # type: ignore[no-untyped-def]
        if environ.get("PATH_INFO") == "/portico-moto/patches":
            body = json.dumps({"moto": moto.__version__, "patches": applied, "counters": counters}).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        return dispatch(self, environ, start_response)

    DomainDispatcherApplication.__call__ = __call__  # type: ignore[method-assign]


def main() -> None:
    if os.environ.get("PORTICO_MOTO_PLAIN") != "1" and moto.__version__ == PATCHED_VERSION:
        patch_ec2_tags_by_resource_id()
        patch_security_group_tag_filters()
        patch_elbv2_indexes()
        patch_tagging_walk()
    answer_patches_applied()
    from moto.server import main as moto_main

    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
