package org.apache.beam.runners.jobsubmission;

import java.util.Objects;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;

/** A job prepared by {@code Prepare}: waiting for its artifacts to be staged and for {@code Run}. */
public final class JobPreparation {
  private final String id;
  private final RunnerApi.Pipeline pipeline;
  private final Struct options;
  private final String stagingToken;

  JobPreparation(String id, RunnerApi.Pipeline pipeline, Struct options, String stagingToken) {
    this.id = Objects.requireNonNull(id);
    this.pipeline = Objects.requireNonNull(pipeline);
    this.options = Objects.requireNonNull(options);
    this.stagingToken = Objects.requireNonNull(stagingToken);
  }

  /** The preparation id handed to the client. */
  public String id() {
    return id;
  }

  /** The pipeline as the client sent it. */
  public RunnerApi.Pipeline pipeline() {
    return pipeline;
  }

  /** The pipeline options as the client sent them. */
  public Struct options() {
    return options;
  }

  /** The token under which the client stages this job's artifacts. */
  public String stagingToken() {
    return stagingToken;
  }
}
