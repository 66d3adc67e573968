#!/usr/bin/env bash
# Submit a corpusforge pipeline to the Flink session cluster through the Beam Flink job
# server (Beam's portable runner). Runs `python -m pipelines.PIPELINE` locally; the Python
# code itself executes in the TaskManagers' SDK worker-pool sidecars (localhost:50000 inside
# each TaskManager pod), which run the corpusforge image, so nothing is pip-installed there.
#
# Usage:
#   deploy/flink/submit.sh PIPELINE [pipeline flags...]
#   deploy/flink/submit.sh twitter_pairs --input 'gs://B/twitter/2020/01/*.tar' \
#       --out gs://B/release/twitter_pairs/2020-01 --lang en --seed 0 --clean paper
# PIPELINE is twitter_pairs, bitext_pairs or paranmt_pairs; every other argument goes to
# the pipeline unchanged.
#
# This process is the pipeline's driver, not just a submitter: twitter_pairs hashes every
# input archive, runs an extract job and a pairs job one after the other, and writes pairs/
# and manifest.json itself. Run it next to the data and keep it running until it exits;
# RUNBOOK.md shows how to run it in a pod of the cluster from the corpusforge image, which
# carries this script. A job whose driver is gone could never be published, so the job
# server cancels it on the cluster once this process dies (--cancel_job_with_client); rerun
# the same command.
#
# Environment (defaults suit `kubectl port-forward service/corpusforge-beam-job-server
# 8099:8099 8098:8098`; from inside the cluster use corpusforge-beam-job-server:8099/8098):
#   JOB_ENDPOINT           Beam Job API of the job server          (localhost:8099)
#   ARTIFACT_ENDPOINT      its artifact staging service            (localhost:8098)
#   PARALLELISM            Flink parallelism; TaskManagers started = PARALLELISM / slots (8)
#   SDK_WORKER_PARALLELISM Python SDK workers per TaskManager = slots per TaskManager (4)
#   PYTHON                 interpreter with corpusforge installed  (python)
# The submitting interpreter must be Python 3.11 with apache-beam 2.77.0, like the image:
# Beam pickles the pipeline's functions on this side and unpickles them in the sidecar.
set -euo pipefail

usage="usage: $0 {twitter_pairs|bitext_pairs|paranmt_pairs} [pipeline flags...]"
pipeline=${1:?$usage}
shift
case "$pipeline" in
  twitter_pairs|bitext_pairs|paranmt_pairs) ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

JOB_ENDPOINT=${JOB_ENDPOINT:-localhost:8099}
ARTIFACT_ENDPOINT=${ARTIFACT_ENDPOINT:-localhost:8098}
PARALLELISM=${PARALLELISM:-8}
SDK_WORKER_PARALLELISM=${SDK_WORKER_PARALLELISM:-4}
PYTHON=${PYTHON:-python}

"$PYTHON" - <<'PY'
import sys

import apache_beam

if sys.version_info[:2] != (3, 11) or apache_beam.__version__ != "2.77.0":
    sys.exit(
        "submit.sh: need Python 3.11 with apache-beam 2.77.0 to match the SDK worker image, "
        f"got Python {sys.version.split()[0]} with apache-beam {apache_beam.__version__}"
    )
PY

job_name="corpusforge-${pipeline//_/-}-$(date -u +%Y%m%d-%H%M%S)"

# Beam pipeline options for the portable runner. environment_config must match the
# worker-pool sidecar's containerPort in flinkdeployment.yaml. --cancel_job_with_client is
# an option of corpusforge's job server (declared in corpusforge.flink; every --runner flink
# build sets it too).
runner_args=(
  --runner=PortableRunner
  --job_endpoint="$JOB_ENDPOINT"
  --artifact_endpoint="$ARTIFACT_ENDPOINT"
  --environment_type=EXTERNAL
  --environment_config=localhost:50000
  --parallelism="$PARALLELISM"
  --sdk_worker_parallelism="$SDK_WORKER_PARALLELISM"
  --job_name="$job_name"
  --cancel_job_with_client
)

echo "submitting $job_name to $JOB_ENDPOINT" >&2
exec "$PYTHON" -m "pipelines.$pipeline" "$@" "${runner_args[@]}"
