#!/usr/bin/env bash
# Build and push the corpusforge Dataflow image with Cloud Build, then write the Flex
# Template spec that points at it. The image is the workers' SDK container, the Flex
# Template launcher image and the image a driver runs in (see Dockerfile). Pipelines whose
# module drives several Dataflow jobs (twitter_pairs) get the image only, no template.
#
# Usage (from anywhere; paths are resolved against the repository root):
#   PROJECT=my-project REGION=us-central1 REPOSITORY=corpusforge \
#   WORK_BUCKET=my-project-corpusforge-work deploy/dataflow/build.sh
#
# Environment:
#   PROJECT        Google Cloud project                                   (required)
#   REGION         region of the Artifact Registry repo and of Dataflow   (required)
#   REPOSITORY     Artifact Registry Docker repository                    (required)
#   WORK_BUCKET    bucket for templates/, temp/, staging/ (no gs://)      (required)
#   PIPELINE       twitter_pairs | bitext_pairs | paranmt_pairs           (twitter_pairs)
#   TAG            image and template tag                      (UTC date + git commit)
#   IMAGE          full image reference        (REGION-docker.pkg.dev/PROJECT/REPOSITORY/
#                                               corpusforge-PIPELINE:TAG)
#   TEMPLATE_FILE  gs:// path of the template spec (gs://WORK_BUCKET/templates/PIPELINE-TAG.json)
#   METADATA_FILE  parameter metadata; deploy/dataflow/metadata.json for twitter_pairs,
#                  none for the other pipelines unless given
#   LAUNCHER_IMAGE Flex Template launcher base to copy the launcher from; pin a digest
#                  in production (gcr.io/dataflow-templates-base/python311-template-launcher-base:latest)
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

: "${PROJECT:?set PROJECT}"
: "${REGION:?set REGION, e.g. us-central1 (keep it the region of the data buckets)}"
: "${REPOSITORY:?set REPOSITORY, an Artifact Registry Docker repository in REGION}"
: "${WORK_BUCKET:?set WORK_BUCKET, e.g. ${PROJECT}-corpusforge-work (no gs://)}"
PIPELINE=${PIPELINE:-twitter_pairs}
case "$PIPELINE" in
  twitter_pairs|bitext_pairs|paranmt_pairs) ;;
  *) echo "PIPELINE must be twitter_pairs, bitext_pairs or paranmt_pairs, got: $PIPELINE" >&2
     exit 2 ;;
esac
commit=$(git rev-parse --short=10 HEAD 2>/dev/null || echo nogit)
TAG=${TAG:-$(date -u +%Y%m%d-%H%M%S)-$commit}
IMAGE=${IMAGE:-$REGION-docker.pkg.dev/$PROJECT/$REPOSITORY/corpusforge-${PIPELINE//_/-}:$TAG}
TEMPLATE_FILE=${TEMPLATE_FILE:-gs://$WORK_BUCKET/templates/$PIPELINE-$TAG.json}
LAUNCHER_IMAGE=${LAUNCHER_IMAGE:-gcr.io/dataflow-templates-base/python311-template-launcher-base:latest}
if [[ -z "${METADATA_FILE+set}" && "$PIPELINE" == twitter_pairs ]]; then
  METADATA_FILE=deploy/dataflow/metadata.json
fi
METADATA_FILE=${METADATA_FILE:-}

if [[ -n "$(git status --porcelain -- src pipelines schemas pyproject.toml 2>/dev/null)" ]]; then
  echo "warning: uncommitted changes under src/ pipelines/ schemas/ pyproject.toml go into $IMAGE" >&2
fi

echo "== building $IMAGE" >&2
gcloud builds submit . \
  --project "$PROJECT" \
  --region "$REGION" \
  --config deploy/dataflow/cloudbuild.yaml \
  --ignore-file deploy/dataflow/gcloudignore \
  --substitutions "_IMAGE=$IMAGE,_PIPELINE=$PIPELINE,_LAUNCHER_IMAGE=$LAUNCHER_IMAGE"

# Drivers that run several pipelines cannot be Flex Templates (see flex_main.py); for them
# the image is the product: launch.sh direct/cloudrun runs the driver and the workers in it.
multi_job_drivers="twitter_pairs"
if [[ " $multi_job_drivers " == *" $PIPELINE "* ]]; then
  cat <<MSG
Built $IMAGE.
No Flex Template spec for $PIPELINE: it runs several Dataflow jobs from one driver (see
deploy/dataflow/flex_main.py). Run it with deploy/dataflow/launch.sh direct or cloudrun:
  export PROJECT=$PROJECT REGION=$REGION WORK_BUCKET=$WORK_BUCKET PIPELINE=$PIPELINE
  export IMAGE=$IMAGE
MSG
  exit 0
fi

metadata_args=()
if [[ -n "$METADATA_FILE" ]]; then
  metadata_args=(--metadata-file "$METADATA_FILE")
fi

echo "== writing Flex Template spec $TEMPLATE_FILE" >&2
gcloud dataflow flex-template build "$TEMPLATE_FILE" \
  --project "$PROJECT" \
  --image "$IMAGE" \
  --sdk-language PYTHON \
  ${metadata_args[@]+"${metadata_args[@]}"}

cat <<MSG
Built. For deploy/dataflow/launch.sh:
  export PROJECT=$PROJECT REGION=$REGION WORK_BUCKET=$WORK_BUCKET PIPELINE=$PIPELINE
  export IMAGE=$IMAGE
  export TEMPLATE_FILE=$TEMPLATE_FILE
MSG
