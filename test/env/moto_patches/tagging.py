"""Resource Groups Tagging GetResources: EC2 left out when no EC2 type is asked for; ELBv2's resources by tag from an index.

moto's walk goes through every resource of every service, EC2's included when only load balancers are asked for,
and makes a copy of each one's tags to test them: finding one Service's load balancer and target groups costs every
load balancer and target group of the account.
"""

from collections import OrderedDict

from . import applied, counters
from .indexes import TagIndex, arrival_order


def patch_elbv2_indexes() -> None:
    """ELBv2: a tag store that keeps every resource under each tag it has, and dicts that know their order."""
    from moto.elbv2.models import ELBv2Backend
    from moto.utilities.tagging_service import TaggingService

    class IndexedTags(TaggingService):
        """moto's tag store, with each resource listed under each tag it has."""

        def __init__(self) -> None:
            super().__init__()
            self.index = TagIndex()

        def reindex(self, arn: str) -> None:
            self.index.reindex(arn, self.tags.get(arn))

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

    ArrivalOrder = arrival_order(OrderedDict)
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
        # GetResources' tag values are compared exactly (make_tag_matcher), so any filter can narrow.
        tags = backend.tagging_service
        if not tag_filters or not getattr(backend, "tags_indexed", False):
            return None
        narrowest = min((tags.index.with_tag(f["Key"], f.get("Values") or []) for f in tag_filters), key=len)
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
