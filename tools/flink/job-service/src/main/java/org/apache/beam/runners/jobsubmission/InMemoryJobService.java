package org.apache.beam.runners.jobsubmission;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.beam.model.jobmanagement.v1.JobApi;
import org.apache.beam.model.jobmanagement.v1.JobApi.JobMessage;
import org.apache.beam.model.jobmanagement.v1.JobApi.JobStateEvent;
import org.apache.beam.model.jobmanagement.v1.JobServiceGrpc;
import org.apache.beam.model.pipeline.v1.Endpoints;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.fnexecution.artifact.ArtifactStagingService;
import org.apache.beam.sdk.fn.server.FnService;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Value;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.Status;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.StatusRuntimeException;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.stub.ServerCallStreamObserver;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job API (prepare, stage, run, watch, cancel) served from memory: a job's artifacts are
 * staged through an {@link ArtifactStagingService}, then the job is handed to a {@link
 * JobInvoker}. Jobs are kept for the life of the process.
 *
 * <p>Each job gets a name of its own ({@link FlinkClusterJob#uniquelyNamed}), by which a cancel
 * finds it on the cluster. A job whose options set {@value #WITH_CLIENT_OPTION} to {@code true}
 * is cancelled once every client watching it (its state and message streams) has gone away
 * without its having ended: the client died (a build killed, its machine's connection reset),
 * and no one would publish what the job writes. A job without it (a detached submission) runs
 * on when its client goes, as Beam's job servers do.
 */
public class InMemoryJobService extends JobServiceGrpc.JobServiceImplBase implements FnService {
  private static final Logger LOG = LoggerFactory.getLogger(InMemoryJobService.class);

  /** The pipeline option ({@code --cancel_job_with_client}) that ends a job with its client. */
  static final String WITH_CLIENT_OPTION = "beam:option:cancel_job_with_client:v1";

  private final Endpoints.ApiServiceDescriptor stagingEndpoint;
  private final ArtifactStagingService stagingService;
  private final JobInvoker invoker;
  private final boolean cleanArtifactsPerJob;
  private final Map<String, JobPreparation> preparations = new ConcurrentHashMap<>();
  private final Map<String, JobInvocation> invocations = new ConcurrentHashMap<>();
  private final Map<String, Integer> watchers = new ConcurrentHashMap<>();

  /**
   * @param stagingEndpoint where clients stage artifacts
   * @param stagingService the service behind {@code stagingEndpoint}
   * @param invoker the engine's invoker
   * @param cleanArtifactsPerJob whether a job's staged artifacts are removed when it ends
   */
  public static InMemoryJobService create(
      Endpoints.ApiServiceDescriptor stagingEndpoint,
      ArtifactStagingService stagingService,
      JobInvoker invoker,
      boolean cleanArtifactsPerJob) {
    return new InMemoryJobService(stagingEndpoint, stagingService, invoker, cleanArtifactsPerJob);
  }

  private InMemoryJobService(
      Endpoints.ApiServiceDescriptor stagingEndpoint,
      ArtifactStagingService stagingService,
      JobInvoker invoker,
      boolean cleanArtifactsPerJob) {
    this.stagingEndpoint = stagingEndpoint;
    this.stagingService = stagingService;
    this.invoker = invoker;
    this.cleanArtifactsPerJob = cleanArtifactsPerJob;
  }

  @Override
  public void prepare(
      JobApi.PrepareJobRequest request, StreamObserver<JobApi.PrepareJobResponse> response) {
    try {
      String id = request.getJobName() + "_" + UUID.randomUUID();
      String stagingToken = id;
      RunnerApi.Pipeline pipeline = request.getPipeline();
      Map<String, List<RunnerApi.ArtifactInformation>> wanted = new HashMap<>();
      pipeline
          .getComponents()
          .getEnvironmentsMap()
          .forEach((envId, env) -> wanted.put(envId, env.getDependenciesList()));
      stagingService.registerJob(stagingToken, wanted);
      Struct options =
          FlinkClusterJob.uniquelyNamed(request.getPipelineOptions(), request.getJobName());
      preparations.put(id, new JobPreparation(id, pipeline, options, stagingToken));
      LOG.info("Prepared job {}", id);
      response.onNext(
          JobApi.PrepareJobResponse.newBuilder()
              .setPreparationId(id)
              .setArtifactStagingEndpoint(stagingEndpoint)
              .setStagingSessionToken(stagingToken)
              .build());
      response.onCompleted();
    } catch (Exception e) {
      LOG.error("Could not prepare job {}", request.getJobName(), e);
      response.onError(Status.INTERNAL.withCause(e).withDescription(e.toString()).asException());
    }
  }

  @Override
  public void run(JobApi.RunJobRequest request, StreamObserver<JobApi.RunJobResponse> response) {
    JobPreparation preparation = preparations.remove(request.getPreparationId());
    if (preparation == null) {
      response.onError(
          Status.NOT_FOUND
              .withDescription("no prepared job " + request.getPreparationId())
              .asException());
      return;
    }
    try {
      RunnerApi.Pipeline pipeline =
          withStagedArtifacts(
              preparation.pipeline(),
              stagingService.getStagedArtifacts(preparation.stagingToken()));
      JobInvocation invocation =
          invoker.invoke(pipeline, preparation.options(), request.getRetrievalToken());
      invocations.put(invocation.getId(), invocation);
      if (cleanArtifactsPerJob) {
        invocation.addStateListener(removeArtifactsAtTheEnd(preparation.stagingToken()));
      }
      invocation.start();
      response.onNext(JobApi.RunJobResponse.newBuilder().setJobId(invocation.getId()).build());
      response.onCompleted();
    } catch (Exception e) {
      LOG.error("Could not run job {}", preparation.id(), e);
      response.onError(Status.INTERNAL.withCause(e).withDescription(e.toString()).asException());
    }
  }

  @Override
  public void getJobs(
      JobApi.GetJobsRequest request, StreamObserver<JobApi.GetJobsResponse> response) {
    JobApi.GetJobsResponse.Builder jobs = JobApi.GetJobsResponse.newBuilder();
    invocations.values().forEach(invocation -> jobs.addJobInfo(invocation.toProto()));
    response.onNext(jobs.build());
    response.onCompleted();
  }

  @Override
  public void getState(
      JobApi.GetJobStateRequest request, StreamObserver<JobStateEvent> response) {
    try {
      response.onNext(invocation(request.getJobId()).getStateEvent());
      response.onCompleted();
    } catch (StatusRuntimeException e) {
      response.onError(e);
    }
  }

  @Override
  public void getPipeline(
      JobApi.GetJobPipelineRequest request,
      StreamObserver<JobApi.GetJobPipelineResponse> response) {
    try {
      RunnerApi.Pipeline pipeline = invocation(request.getJobId()).getPipeline();
      response.onNext(JobApi.GetJobPipelineResponse.newBuilder().setPipeline(pipeline).build());
      response.onCompleted();
    } catch (StatusRuntimeException e) {
      response.onError(e);
    }
  }

  @Override
  public void cancel(
      JobApi.CancelJobRequest request, StreamObserver<JobApi.CancelJobResponse> response) {
    try {
      JobInvocation invocation = invocation(request.getJobId());
      invocation.cancel();
      response.onNext(JobApi.CancelJobResponse.newBuilder().setState(invocation.getState()).build());
      response.onCompleted();
    } catch (StatusRuntimeException e) {
      response.onError(e);
    }
  }

  @Override
  public void getStateStream(
      JobApi.GetJobStateRequest request, StreamObserver<JobStateEvent> response) {
    JobInvocation invocation;
    try {
      invocation = invocation(request.getJobId());
    } catch (StatusRuntimeException e) {
      response.onError(e);
      return;
    }
    Consumer<JobStateEvent> listener =
        new Consumer<>() {
          private boolean closed;

          @Override
          public synchronized void accept(JobStateEvent event) {
            if (closed) {
              return;
            }
            response.onNext(event);
            if (JobInvocation.isTerminal(event.getState())) {
              closed = true;
              response.onCompleted();
            }
          }
        };
    Runnable gone = watch(invocation);
    whenCancelled(
        response,
        () -> {
          invocation.removeListener(listener);
          gone.run();
        });
    invocation.addStateListener(listener);
  }

  @Override
  public void getMessageStream(
      JobApi.JobMessagesRequest request, StreamObserver<JobApi.JobMessagesResponse> response) {
    JobInvocation invocation;
    try {
      invocation = invocation(request.getJobId());
    } catch (StatusRuntimeException e) {
      response.onError(e);
      return;
    }
    MessageStream stream = new MessageStream(response);
    Runnable gone = watch(invocation);
    whenCancelled(
        response,
        () -> {
          invocation.removeListener(stream.states);
          invocation.removeListener(stream.messages);
          gone.run();
        });
    invocation.addMessageListener(stream.messages);
    invocation.addStateListener(stream.states);
  }

  @Override
  public void getJobMetrics(
      JobApi.GetJobMetricsRequest request, StreamObserver<JobApi.GetJobMetricsResponse> response) {
    try {
      JobApi.MetricResults metrics = invocation(request.getJobId()).getMetrics();
      response.onNext(JobApi.GetJobMetricsResponse.newBuilder().setMetrics(metrics).build());
      response.onCompleted();
    } catch (StatusRuntimeException e) {
      response.onError(e);
    }
  }

  @Override
  public void describePipelineOptions(
      JobApi.DescribePipelineOptionsRequest request,
      StreamObserver<JobApi.DescribePipelineOptionsResponse> response) {
    try {
      response.onNext(
          JobApi.DescribePipelineOptionsResponse.newBuilder()
              .addAllOptions(
                  PipelineOptionsFactory.describe(PipelineOptionsFactory.getRegisteredOptions()))
              .build());
      response.onCompleted();
    } catch (Exception e) {
      LOG.error("Could not describe the pipeline options", e);
      response.onError(Status.INTERNAL.withCause(e).withDescription(e.toString()).asException());
    }
  }

  @Override
  public void close() {
    for (JobInvocation invocation : invocations.values()) {
      invocation.cancel();
    }
  }

  private JobInvocation invocation(String jobId) {
    JobInvocation invocation = invocations.get(jobId);
    if (invocation == null) {
      throw Status.NOT_FOUND.withDescription("no job " + jobId).asRuntimeException();
    }
    return invocation;
  }

  /**
   * Count one more client watching {@code invocation}; the returned action, run when that client
   * goes away, cancels the job if it was the last, the job has not ended and its options ask for
   * it ({@value #WITH_CLIENT_OPTION}).
   */
  private Runnable watch(JobInvocation invocation) {
    String id = invocation.getId();
    watchers.merge(id, 1, Integer::sum);
    return () -> {
      int left = watchers.merge(id, -1, Integer::sum);
      if (left > 0 || JobInvocation.isTerminal(invocation.getState())) {
        return;
      }
      if (endsWithClient(invocation.toProto().getPipelineOptions())) {
        LOG.warn("Every client watching job {} has gone away: cancelling it, as it asked", id);
        invocation.cancel();
      } else {
        LOG.info("Every client watching job {} has gone away; it runs on (detached)", id);
      }
    };
  }

  /** Whether a job's options ask for it to end with its client ({@value #WITH_CLIENT_OPTION}). */
  static boolean endsWithClient(Struct options) {
    Value value = options.getFieldsMap().get(WITH_CLIENT_OPTION);
    if (value == null) {
      return false;
    }
    return value.getKindCase() == Value.KindCase.BOOL_VALUE
        ? value.getBoolValue()
        : "true".equalsIgnoreCase(value.getStringValue());
  }

  private Consumer<JobStateEvent> removeArtifactsAtTheEnd(String stagingToken) {
    return event -> {
      if (JobInvocation.isTerminal(event.getState())) {
        try {
          stagingService.removeStagedArtifacts(stagingToken);
        } catch (Exception e) {
          LOG.warn("Could not remove the staged artifacts of {}", stagingToken, e);
        }
      }
    };
  }

  /** The pipeline with each environment's dependencies replaced by those staged for it. */
  private static RunnerApi.Pipeline withStagedArtifacts(
      RunnerApi.Pipeline pipeline, Map<String, List<RunnerApi.ArtifactInformation>> staged) {
    RunnerApi.Pipeline.Builder builder = pipeline.toBuilder();
    RunnerApi.Components.Builder components = builder.getComponentsBuilder();
    staged.forEach(
        (envId, artifacts) -> {
          RunnerApi.Environment env = components.getEnvironmentsOrThrow(envId);
          components.putEnvironments(
              envId, env.toBuilder().clearDependencies().addAllDependencies(artifacts).build());
        });
    return builder.build();
  }

  private static void whenCancelled(StreamObserver<?> response, Runnable action) {
    if (response instanceof ServerCallStreamObserver) {
      ((ServerCallStreamObserver<?>) response).setOnCancelHandler(action);
    }
  }

  /** A job's messages and state changes on one stream, closed once the job has ended. */
  private static final class MessageStream {
    private final StreamObserver<JobApi.JobMessagesResponse> response;
    private boolean closed;
    final Consumer<JobMessage> messages = this::message;
    final Consumer<JobStateEvent> states = this::state;

    MessageStream(StreamObserver<JobApi.JobMessagesResponse> response) {
      this.response = response;
    }

    private synchronized void message(JobMessage message) {
      if (!closed) {
        response.onNext(JobApi.JobMessagesResponse.newBuilder().setMessageResponse(message).build());
      }
    }

    private synchronized void state(JobStateEvent event) {
      if (closed) {
        return;
      }
      response.onNext(JobApi.JobMessagesResponse.newBuilder().setStateResponse(event).build());
      if (JobInvocation.isTerminal(event.getState())) {
        closed = true;
        response.onCompleted();
      }
    }
  }
}
