"""moto's server with its tag lookups served from the indexes moto already keeps.

Started by test/harness/awsEmulator.ts with the python of moto's virtualenv, with moto_server's arguments.

moto 5.2.5 finds an EC2 resource's tags by scanning every tag of the region (TagBackend.describe_tags with a
"resource-id" filter, compiled to a regular expression and matched against every resource id). Every tag
filter of a Describe call (tag:Key, tag-key, tag-value) and every resource a response shows does that once or
twice, so DescribeSecurityGroups with a tag filter costs groups x tags: seconds once an account holds a thousand
Services, where AWS answers in the same time whatever the account holds. Tagging GetResources walks every
resource of every service, EC2's included when only load balancers are asked for.

The patches below change where the answer comes from, never what it is: the same results in the same order. They
are written against moto 5.2.5 (test/env/requirements-moto.txt pins it); with any other version none is applied,
the server is moto's own, and test/integration/aws/motoIndex.test.ts fails to say the patches need a look.

GET /portico-moto/patches answers with the patches applied, so a test can tell this server from a plain one.
PORTICO_MOTO_PLAIN=1 applies none (to measure moto without them: test/env/motoScaling.ts --plain).
"""

import json
import os
import sys

import moto

PATCHED_VERSION = "5.2.5"
applied: list[str] = []
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


def patch_tagging_skips_ec2() -> None:
    """GetResources: the EC2 backend is not walked when the resource types asked for are none of EC2's."""
    from moto.core.resource_tagging import make_tag_matcher, match_resource_type
    from moto.ec2.models import EC2Backend
    from moto.resourcegroupstaggingapi import models

    walk = models.ResourceGroupsTaggingAPIBackend._get_resources_generator

    def _get_resources_generator(self, tag_filters=None, resource_type_filters=None, resource_arn_list=None):  # type: ignore[no-untyped-def]
        # match_resource_type takes a filter as a service ("ec2") or a type ("ec2:security-group"), and every
        # type EC2's iter_tagged_resources yields is "ec2:...": with filters naming neither, none of its
        # resources can match. No filter matches every type, so EC2 is then walked as before.
        if not resource_type_filters or any(f == "ec2" or f.startswith("ec2:") for f in resource_type_filters):
            return walk(self, tag_filters, resource_type_filters, resource_arn_list)
        return walk_without_ec2(self, tag_filters, resource_type_filters, resource_arn_list)

    def walk_without_ec2(self, tag_filters, resource_type_filters, resource_arn_list):  # type: ignore[no-untyped-def]
        # moto 5.2.5's ResourceGroupsTaggingAPIBackend._get_resources_generator line for line, but for the
        # isinstance test (its comments on untagged resources apply here too).
        tag_matcher = make_tag_matcher(tag_filters)
        for backend in models.iter_taggable_backends(self.account_id, self.region_name):
            if isinstance(backend, EC2Backend):
                continue
            for resource in backend.iter_tagged_resources():
                if not resource.tags and not resource.extra.get("include_untagged"):
                    continue
                if not match_resource_type(resource.resource_type, resource_type_filters):
                    continue
                if not tag_matcher(resource.tags):
                    continue
                if resource_arn_list and resource.arn not in resource_arn_list:
                    continue
                yield resource

    models.ResourceGroupsTaggingAPIBackend._get_resources_generator = _get_resources_generator  # type: ignore[method-assign]
    applied.append("tagging-skips-ec2-for-other-types")


def answer_patches_applied() -> None:
    """GET /portico-moto/patches: which patches this server runs with."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    dispatch = DomainDispatcherApplication.__call__

    def __call__(self, environ, start_response):  # type: ignore[no-untyped-def]
        if environ.get("PATH_INFO") == "/portico-moto/patches":
            body = json.dumps({"moto": moto.__version__, "patches": applied}).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        return dispatch(self, environ, start_response)

    DomainDispatcherApplication.__call__ = __call__  # type: ignore[method-assign]


def main() -> None:
    if os.environ.get("PORTICO_MOTO_PLAIN") != "1" and moto.__version__ == PATCHED_VERSION:
        patch_ec2_tags_by_resource_id()
        patch_security_group_tag_filters()
        patch_tagging_skips_ec2()
    answer_patches_applied()
    from moto.server import main as moto_main

    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
