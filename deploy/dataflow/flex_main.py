"""Flex Template entry point: runs ``python -m $CORPUSFORGE_PIPELINE`` with the launcher's flags.

The Dataflow Flex Template launcher executes the file named by FLEX_TEMPLATE_PYTHON_PY_FILE
as a script, passing every template parameter as ``--name=value``. Running a pipeline
module such as ``pipelines/twitter_pairs.py`` directly as a script would break its package
imports, so this file hands over to the installed module exactly as ``python -m`` would.
The Dockerfile sets CORPUSFORGE_PIPELINE from its PIPELINE build argument.

A Flex Template launch turns exactly one Beam pipeline into one Dataflow job: on the
launcher VM, running a pipeline only writes its job description, and the launcher submits
that after the program exits. A module that runs several pipelines and reads or writes
storage between them (a driver) therefore cannot be launched this way: its first
``with Pipeline()`` returns at once, the code after it acts on output that does not exist
yet, and only the last pipeline would be submitted. Drivers are listed in
MULTI_JOB_DRIVERS and refused here, before they touch any storage; run them with
``deploy/dataflow/launch.sh direct`` or ``cloudrun`` (see deploy/dataflow/RUNBOOK.md).

Equivalent command line inside the image:
    CORPUSFORGE_PIPELINE=pipelines.bitext_pairs python deploy/dataflow/flex_main.py \
        --input=gs://BUCKET/opus/... --out=gs://BUCKET/release/bitext_pairs
"""

from __future__ import annotations

import os
import runpy

PIPELINES = frozenset(
    {"pipelines.twitter_pairs", "pipelines.bitext_pairs", "pipelines.paranmt_pairs"}
)
# twitter_pairs: corpusforge.builds.twitter.build() runs an extract pipeline, then a
# pairs pipeline on the extracts it lists, then publishes pairs/ and writes manifest.json.
MULTI_JOB_DRIVERS = frozenset({"pipelines.twitter_pairs"})


def main() -> None:
    """Run the pipeline module named by CORPUSFORGE_PIPELINE as ``__main__``."""
    module = os.environ.get("CORPUSFORGE_PIPELINE", "pipelines.twitter_pairs")
    if module not in PIPELINES:
        raise SystemExit(f"CORPUSFORGE_PIPELINE={module!r} is not one of {sorted(PIPELINES)}")
    if module in MULTI_JOB_DRIVERS:
        raise SystemExit(
            f"{module} runs several Dataflow jobs from one driver and cannot be launched as a "
            "Flex Template; run it with deploy/dataflow/launch.sh direct or cloudrun instead"
        )
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
