package org.apache.beam.runners.jobsubmission;

import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.fnexecution.provisioning.JobInfo;

/**
 * What the Flink runner uses when a client asks for an executable jar instead of a run
 * ({@code --output_executable_path}). This job server does not write such jars: the job fails
 * with a message saying so, and nothing is run. Submit the pipeline to the job server instead.
 */
public class PortablePipelineJarCreator implements PortablePipelineRunner {
  private final Class<?> mainClass;

  /**
   * @param mainClass the class the jar would start
   */
  public PortablePipelineJarCreator(Class<?> mainClass) {
    this.mainClass = mainClass;
  }

  @Override
  public PortablePipelineResult run(RunnerApi.Pipeline pipeline, JobInfo jobInfo) {
    throw new UnsupportedOperationException(
        "--output_executable_path is not supported by corpusforge's job server (a jar starting "
            + mainClass.getName()
            + " was asked for job "
            + jobInfo.jobName()
            + "): submit the pipeline to the job server instead");
  }
}
