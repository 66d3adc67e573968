package org.apache.beam.runners.jobsubmission;

import java.io.IOException;
import java.util.concurrent.Executors;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListeningExecutorService;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.MoreExecutors;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ThreadFactoryBuilder;
import org.checkerframework.checker.nullness.qual.Nullable;

/** Turns a staged pipeline into a {@link JobInvocation} for one engine; runs jobs on its threads. */
public abstract class JobInvoker {
  private final ListeningExecutorService executorService;

  /**
   * @param nameFormat the name of the job threads, with {@code %d} for their number
   */
  protected JobInvoker(String nameFormat) {
    this.executorService =
        MoreExecutors.listeningDecorator(
            Executors.newCachedThreadPool(
                new ThreadFactoryBuilder().setNameFormat(nameFormat).setDaemon(true).build()));
  }

  /** The engine's invocation of {@code pipeline}, to run on {@code executorService}. */
  protected abstract JobInvocation invokeWithExecutor(
      RunnerApi.Pipeline pipeline,
      Struct options,
      @Nullable String retrievalToken,
      ListeningExecutorService executorService)
      throws IOException;

  /**
   * An invocation of {@code pipeline}, not started yet.
   *
   * @param pipeline the pipeline, its artifacts staged
   * @param options the pipeline options the client sent
   * @param retrievalToken the token the workers fetch artifacts with
   */
  JobInvocation invoke(RunnerApi.Pipeline pipeline, Struct options, @Nullable String retrievalToken)
      throws IOException {
    return invokeWithExecutor(pipeline, options, retrievalToken, executorService);
  }
}
