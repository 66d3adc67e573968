package org.apache.beam.runners.jobsubmission;

import org.apache.beam.model.jobmanagement.v1.JobApi;
import org.apache.beam.sdk.PipelineResult;

/** The result of a pipeline run by a {@link PortablePipelineRunner}, with its metrics as protos. */
public interface PortablePipelineResult extends PipelineResult {

  /**
   * The job's metrics as the job API reports them.
   *
   * @throws UnsupportedOperationException the runner keeps no metrics for this job
   */
  JobApi.MetricResults portableMetrics() throws UnsupportedOperationException;
}
