package org.apache.beam.runners.jobsubmission;

import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.fnexecution.provisioning.JobInfo;

/** Runs a portable pipeline proto on an engine (Flink, here); blocks until the job ends. */
public interface PortablePipelineRunner {

  /**
   * Run {@code pipeline} and return its result.
   *
   * @param pipeline the pipeline, its environments' artifacts already staged
   * @param jobInfo the job's id, name, retrieval token and options
   * @throws Exception the engine failed the job or could not start it
   */
  PortablePipelineResult run(RunnerApi.Pipeline pipeline, JobInfo jobInfo) throws Exception;
}
