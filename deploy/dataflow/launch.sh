#!/usr/bin/env bash
# Run a corpusforge pipeline on Dataflow. Three ways, all with the workers in $IMAGE:
#   direct    run `python -m pipelines.PIPELINE --runner DataflowRunner ...` here. The module
#             is the driver: for twitter_pairs it hashes every input archive, runs the
#             extract job and the pairs job one after the other, then publishes pairs/ and
#             manifest.json, so run it close to the data (same region) and keep it running.
#   cloudrun  run that same `direct` driver as a Cloud Run job from $IMAGE in $REGION. This
#             command only waits for it: the job carries on if the command is interrupted.
#   template  launch the Flex Template build.sh wrote. Only for single-pipeline modules:
#             twitter_pairs drives several jobs and is refused (see flex_main.py).
#
# Usage:
#   deploy/dataflow/launch.sh direct   [extra pipeline flags, e.g. --lang en --seed 0]
#   deploy/dataflow/launch.sh cloudrun [extra pipeline flags]
#   deploy/dataflow/launch.sh template [extra gcloud flags, e.g. --parameters lang=en]
#
# Environment:
#   PROJECT, REGION     project and region; REGION must be the region of the buckets (required)
#   WORK_BUCKET         bucket for temp/ and staging/, no gs://                     (required)
#   IMAGE               image pushed by build.sh                                    (required)
#   INPUT               archive path or glob, no commas                             (required)
#                       e.g. gs://P-corpusforge-raw/twitter/archiveteam/2021/01/*.zip
#   OUT                 release directory, e.g. gs://P-corpusforge-release/twitter_pairs/en-2021-01
#   PIPELINE            twitter_pairs | bitext_pairs | paranmt_pairs               (twitter_pairs)
#   TEMPLATE_FILE       template spec written by build.sh               (required for template)
#   MACHINE_TYPE        worker machine type; ignored with PRIME=1            (n2-standard-4)
#   MAX_WORKERS         autoscaling ceiling                                  (32)
#   FLEXRS              COST_OPTIMIZED for FlexRS (delayed start, discounted)      (unset)
#   PRIME               1 to run on Dataflow Prime instead of classic workers      (0)
#   SERVICE_ACCOUNT     worker (and Cloud Run driver) service account email        (unset)
#   SUBNETWORK          regions/REGION/subnetworks/NAME, runs workers without public IPs (unset)
#   DRIVER_TIMEOUT      cloudrun: longest the driver may run                       (24h)
# See deploy/dataflow/RUNBOOK.md for sizing and cost.
set -euo pipefail

usage="usage: $0 {direct|cloudrun|template} [extra flags...]"
mode=${1:-}
if [[ $# -gt 0 ]]; then shift; fi

: "${PROJECT:?set PROJECT}"
: "${REGION:?set REGION (the region of the raw and release buckets)}"
: "${WORK_BUCKET:?set WORK_BUCKET (no gs://)}"
: "${IMAGE:?set IMAGE to the image build.sh pushed}"
: "${INPUT:?set INPUT to the archive path or glob}"
: "${OUT:?set OUT to the release directory}"
PIPELINE=${PIPELINE:-twitter_pairs}
MACHINE_TYPE=${MACHINE_TYPE:-n2-standard-4}
MAX_WORKERS=${MAX_WORKERS:-32}
FLEXRS=${FLEXRS:-}
PRIME=${PRIME:-0}
SERVICE_ACCOUNT=${SERVICE_ACCOUNT:-}
SUBNETWORK=${SUBNETWORK:-}
DRIVER_TIMEOUT=${DRIVER_TIMEOUT:-24h}

case "$PIPELINE" in
  twitter_pairs|bitext_pairs|paranmt_pairs) ;;
  *) echo "PIPELINE must be twitter_pairs, bitext_pairs or paranmt_pairs, got: $PIPELINE" >&2
     exit 2 ;;
esac
if [[ -n "$FLEXRS" && "$PRIME" == 1 ]]; then
  echo "choose one of FLEXRS and PRIME per run; compare them on a one-month run first" >&2
  exit 2
fi
if [[ "$INPUT" == *,* ]]; then
  echo "INPUT must not contain commas; use one glob with character classes (202[0-2])" >&2
  exit 2
fi
stamp=$(date -u +%Y%m%d-%H%M%S)
job_name="corpusforge-${PIPELINE//_/-}-$stamp"

case "$mode" in
  direct)
    PYTHON=${PYTHON:-python}
    "$PYTHON" - <<'PY'
import sys

import apache_beam

if sys.version_info[:2] != (3, 11) or apache_beam.__version__ != "2.77.0":
    sys.exit(
        "launch.sh direct: need Python 3.11 with apache-beam 2.77.0 to match the worker "
        f"image, got Python {sys.version.split()[0]} with apache-beam {apache_beam.__version__}"
    )
try:
    import apache_beam.io.gcp.gcsio  # noqa: F401
    import google.cloud.storage  # noqa: F401
except ImportError as err:
    sys.exit(f"launch.sh direct: pip install 'apache-beam[gcp]==2.77.0' first ({err})")
PY
    # Beam pipeline options for the DataflowRunner; the pipeline's own flags come first.
    dataflow_args=(
      --runner=DataflowRunner
      --project="$PROJECT"
      --region="$REGION"
      --job_name="$job_name"
      --temp_location="gs://$WORK_BUCKET/temp"
      --staging_location="gs://$WORK_BUCKET/staging"
      --sdk_container_image="$IMAGE"
      --max_num_workers="$MAX_WORKERS"
      --labels=app=corpusforge
      --labels="pipeline=$PIPELINE"
    )
    if [[ "$PRIME" == 1 ]]; then
      dataflow_args+=(--dataflow_service_options=enable_prime)
    else
      dataflow_args+=(--machine_type="$MACHINE_TYPE")
    fi
    if [[ -n "$FLEXRS" ]]; then dataflow_args+=(--flexrs_goal="$FLEXRS"); fi
    if [[ -n "$SERVICE_ACCOUNT" ]]; then dataflow_args+=(--service_account_email="$SERVICE_ACCOUNT"); fi
    if [[ -n "$SUBNETWORK" ]]; then dataflow_args+=(--subnetwork="$SUBNETWORK" --no_use_public_ips); fi
    exec "$PYTHON" -m "pipelines.$PIPELINE" --input "$INPUT" --out "$OUT" "$@" "${dataflow_args[@]}"
    ;;
  cloudrun)
    # The same `direct` driver, inside $IMAGE (WORKDIR /template holds deploy/). gcloud's
    # ^@^ prefix makes @ the list separator, so values may contain commas and '='.
    env_list="PROJECT=$PROJECT@REGION=$REGION@WORK_BUCKET=$WORK_BUCKET@IMAGE=$IMAGE"
    env_list+="@INPUT=$INPUT@OUT=$OUT@PIPELINE=$PIPELINE@MACHINE_TYPE=$MACHINE_TYPE"
    env_list+="@MAX_WORKERS=$MAX_WORKERS@FLEXRS=$FLEXRS@PRIME=$PRIME"
    env_list+="@SERVICE_ACCOUNT=$SERVICE_ACCOUNT@SUBNETWORK=$SUBNETWORK"
    arg_list="deploy/dataflow/launch.sh@direct"
    for arg in "$@"; do arg_list+="@$arg"; done
    run_args=(
      --project "$PROJECT"
      --region "$REGION"
      --image "$IMAGE"
      --command bash
      --args "^@^$arg_list"
      --set-env-vars "^@^$env_list"
      --task-timeout "$DRIVER_TIMEOUT"
      --max-retries 0
      --cpu 2
      --memory 4Gi
      --labels "app=corpusforge,pipeline=$PIPELINE"
    )
    if [[ -n "$SERVICE_ACCOUNT" ]]; then run_args+=(--service-account "$SERVICE_ACCOUNT"); fi
    exec gcloud run jobs deploy "corpusforge-driver-${PIPELINE//_/-}" "${run_args[@]}" \
      --execute-now --wait
    ;;
  template)
    : "${TEMPLATE_FILE:?set TEMPLATE_FILE to the spec build.sh wrote}"
    if [[ "$PIPELINE" == twitter_pairs ]]; then
      echo "twitter_pairs drives several Dataflow jobs and has no Flex Template; use direct or cloudrun" >&2
      exit 2
    fi
    gcloud_args=(
      --project "$PROJECT"
      --region "$REGION"
      --template-file-gcs-location "$TEMPLATE_FILE"
      --temp-location "gs://$WORK_BUCKET/temp"
      --staging-location "gs://$WORK_BUCKET/staging"
      --max-workers "$MAX_WORKERS"
      --additional-user-labels "app=corpusforge,pipeline=$PIPELINE"
      # Template parameters (metadata.json) and standard pipeline options. Values must not
      # contain commas: gcloud splits --parameters on them.
      --parameters "input=$INPUT"
      --parameters "out=$OUT"
      --parameters "sdk_container_image=$IMAGE"
    )
    if [[ "$PRIME" == 1 ]]; then
      gcloud_args+=(--additional-experiments enable_prime)
    else
      gcloud_args+=(--worker-machine-type "$MACHINE_TYPE")
    fi
    if [[ -n "$FLEXRS" ]]; then gcloud_args+=(--flexrs-goal "$FLEXRS"); fi
    if [[ -n "$SERVICE_ACCOUNT" ]]; then gcloud_args+=(--service-account-email "$SERVICE_ACCOUNT"); fi
    if [[ -n "$SUBNETWORK" ]]; then gcloud_args+=(--subnetwork "$SUBNETWORK" --disable-public-ips); fi
    exec gcloud dataflow flex-template run "$job_name" "${gcloud_args[@]}" "$@"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
