"""moto's server with its lookups by tag, id and name served from indexes, so that its answer time does not grow with
the account as moto's scans do (see test/env/moto_patches/).

Started by test/harness/awsEmulator.ts with the python of moto's virtualenv, with moto_server's arguments.

The patches change where the answer comes from, never what it is: the same results in the same order. They are
written against moto 5.2.5 (test/env/requirements-moto.txt pins it); with any other version none is applied, the
server is moto's own, and test/integration/aws/motoIndex.test.ts fails to say the patches need a look;
motoAgreesWithPlain.test.ts compares the answers with a plain moto's.

GET /portico-moto/patches answers with the patches applied, so a test can tell this server from a plain one, and
with how often the indexes answered.
PORTICO_MOTO_PLAIN=1 applies none (to measure moto without them: test/env/motoScaling.ts --plain).
"""

import json
import os
import sys

import moto
from moto_patches import applied, counters
from moto_patches.ec2 import (
    patch_ec2_tags_by_resource_id,
    patch_security_group_index,
    patch_security_group_tag_filters,
)
from moto_patches.tagging import patch_elbv2_indexes, patch_tagging_walk

PATCHED_VERSION = "5.2.5"


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
        patch_security_group_index()
        patch_elbv2_indexes()
        patch_tagging_walk()
    answer_patches_applied()
    from moto.server import main as moto_main

    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
