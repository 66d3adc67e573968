package org.apache.beam.runners.jobsubmission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.beam.model.jobmanagement.v1.JobApi;
import org.apache.beam.model.jobmanagement.v1.JobApi.JobState;
import org.apache.beam.model.pipeline.v1.Endpoints;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.fnexecution.artifact.ArtifactStagingService;
import org.apache.beam.runners.fnexecution.provisioning.JobInfo;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricResults;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Value;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.Status;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.stub.ServerCallStreamObserver;
import org.apache.beam.vendor.grpc.v1p69p0.io.grpc.stub.StreamObserver;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListeningExecutorService;
import org.joda.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job API's own logic, with a stand-in engine: a runner that waits until the test lets it
 * end, and a record of what would be cancelled on a cluster.
 */
class InMemoryJobServiceTest {
  private static final long WAIT_SECONDS = 10;

  @TempDir Path stagingDir;
  private NoStaging staging;
  private Engine engine;
  private InMemoryJobService service;

  @BeforeEach
  void setUp() {
    staging = new NoStaging(stagingDir);
    engine = new Engine();
    Endpoints.ApiServiceDescriptor where =
        Endpoints.ApiServiceDescriptor.newBuilder().setUrl("localhost:0").build();
    service = InMemoryJobService.create(where, staging, engine, true);
  }

  @Test
  void aJobRunsToDoneAndItsArtifactsAreRemoved() throws Exception {
    String job = submit("one");
    Runner runner = engine.runner(0);
    assertTrue(runner.started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    awaitState(job, JobState.Enum.RUNNING);
    runner.end.countDown();
    awaitState(job, JobState.Enum.DONE);
    assertEquals(
        List.of(JobState.Enum.STARTING, JobState.Enum.RUNNING, JobState.Enum.DONE), states(job));
    assertEquals(1, staging.removed.size());
    assertTrue(engine.cancelledOnCluster.isEmpty());
  }

  @Test
  void cancellingARunningJobCancelsItOnTheClusterAndStopsTheRunner() throws Exception {
    String job = submit("one");
    Runner runner = engine.runner(0);
    assertTrue(runner.started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    Recorder<JobApi.CancelJobResponse> cancelled = new Recorder<>();
    service.cancel(JobApi.CancelJobRequest.newBuilder().setJobId(job).build(), cancelled);
    cancelled.only();
    awaitState(job, JobState.Enum.CANCELLED);
    assertTrue(runner.interrupted.await(WAIT_SECONDS, TimeUnit.SECONDS));
    assertEquals(List.of("one"), cancelledNames());
    assertEquals(JobState.Enum.CANCELLED, states(job).get(states(job).size() - 1));
  }

  @Test
  void closingTheServiceCancelsEveryJobStillRunningAndNoOther() throws Exception {
    String done = submit("done");
    assertTrue(engine.runner(0).started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    engine.runner(0).end.countDown();
    awaitState(done, JobState.Enum.DONE);
    String running = submit("running");
    assertTrue(engine.runner(1).started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    service.close();
    awaitState(running, JobState.Enum.CANCELLED);
    assertEquals(JobState.Enum.DONE, state(done));
    assertEquals(List.of("running"), cancelledNames());
  }

  @Test
  void aJobWhoseClusterCancelledItEndsCancelledNotFailed() throws Exception {
    String job = submit("one");
    Runner runner = engine.runner(0);
    assertTrue(runner.started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    // the cluster cancels the job: the runner's wait ends with the engine's error, not an
    // interrupt, before the invocation stops the runner itself
    engine.onClusterCancel =
        () -> {
          runner.fail(new IllegalStateException("Job was cancelled"));
          JobInvocation invocation = engine.invocations.get(0);
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
          while (!JobInvocation.isTerminal(invocation.getState()) && System.nanoTime() < until) {
            Thread.onSpinWait();
          }
        };
    service.close();
    awaitState(job, JobState.Enum.CANCELLED);
  }

  @Test
  void eachJobRunsUnderANameOfItsOwnThatKeepsTheClients() throws Exception {
    submit("same");
    submit("same");
    Recorder<JobApi.PrepareJobResponse> unnamed = new Recorder<>();
    service.prepare(
        JobApi.PrepareJobRequest.newBuilder()
            .setJobName("from-the-request")
            .setPipeline(RunnerApi.Pipeline.getDefaultInstance())
            .setPipelineOptions(Struct.getDefaultInstance())
            .build(),
        unnamed);
    run(unnamed.only().getPreparationId());
    List<String> names =
        engine.invocations.stream()
            .map(invocation -> FlinkClusterJob.name(invocation.toProto().getPipelineOptions()))
            .collect(Collectors.toList());
    assertTrue(names.get(0).matches("same-[0-9a-f]{12}"), names.get(0));
    assertTrue(names.get(1).matches("same-[0-9a-f]{12}"), names.get(1));
    assertNotEquals(names.get(0), names.get(1));
    assertTrue(names.get(2).matches("from-the-request-[0-9a-f]{12}"), names.get(2));
  }

  @Test
  void aJobThatAsksEndsOnceEveryClientWatchingItHasGone() throws Exception {
    String job = submit("one", true);
    assertTrue(engine.runner(0).started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    ClientCall<JobApi.JobStateEvent> states = new ClientCall<>();
    ClientCall<JobApi.JobMessagesResponse> messages = new ClientCall<>();
    service.getStateStream(JobApi.GetJobStateRequest.newBuilder().setJobId(job).build(), states);
    service.getMessageStream(
        JobApi.JobMessagesRequest.newBuilder().setJobId(job).build(), messages);
    states.hangUp();
    assertEquals(JobState.Enum.RUNNING, state(job), "one client still watches");
    messages.hangUp();
    awaitState(job, JobState.Enum.CANCELLED);
    assertTrue(engine.runner(0).interrupted.await(WAIT_SECONDS, TimeUnit.SECONDS));
    assertEquals(List.of("one"), cancelledNames());
  }

  @Test
  void aJobThatDoesNotAskRunsOnWhenItsClientGoes() throws Exception {
    String job = submit("detached", false);
    assertTrue(engine.runner(0).started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    ClientCall<JobApi.JobStateEvent> states = new ClientCall<>();
    service.getStateStream(JobApi.GetJobStateRequest.newBuilder().setJobId(job).build(), states);
    states.hangUp();
    assertEquals(JobState.Enum.RUNNING, state(job));
    engine.runner(0).end.countDown();
    awaitState(job, JobState.Enum.DONE);
    assertTrue(engine.cancelledOnCluster.isEmpty());
  }

  @Test
  void theOptionIsReadAsBeamSendsIt() {
    assertTrue(InMemoryJobService.endsWithClient(options("a", true)));
    assertFalse(InMemoryJobService.endsWithClient(options("a", false)));
    assertFalse(InMemoryJobService.endsWithClient(options("a")));
    Struct asText =
        options("a").toBuilder()
            .putFields(
                InMemoryJobService.WITH_CLIENT_OPTION,
                Value.newBuilder().setStringValue("true").build())
            .build();
    assertTrue(InMemoryJobService.endsWithClient(asText));
  }

  @Test
  void aFailingJobEndsFailedWithItsError() throws Exception {
    String job = submit("one");
    Runner runner = engine.runner(0);
    assertTrue(runner.started.await(WAIT_SECONDS, TimeUnit.SECONDS));
    Recorder<JobApi.JobMessagesResponse> messages = new Recorder<>();
    service.getMessageStream(
        JobApi.JobMessagesRequest.newBuilder().setJobId(job).build(), messages);
    runner.fail(new IllegalStateException("the engine said no"));
    awaitState(job, JobState.Enum.FAILED);
    assertTrue(messages.done.await(WAIT_SECONDS, TimeUnit.SECONDS), "the stream never closed");
    String errors =
        messages.values.stream()
            .filter(JobApi.JobMessagesResponse::hasMessageResponse)
            .map(m -> m.getMessageResponse().getMessageText())
            .collect(Collectors.joining());
    assertTrue(errors.contains("the engine said no"), errors);
    assertTrue(engine.cancelledOnCluster.isEmpty());
  }

  @Test
  void cancellingAnEndedJobChangesNothing() throws Exception {
    String job = submit("one");
    engine.runner(0).end.countDown();
    awaitState(job, JobState.Enum.DONE);
    Recorder<JobApi.CancelJobResponse> cancelled = new Recorder<>();
    service.cancel(JobApi.CancelJobRequest.newBuilder().setJobId(job).build(), cancelled);
    assertEquals(JobState.Enum.DONE, cancelled.only().getState());
    assertTrue(engine.cancelledOnCluster.isEmpty());
  }

  @Test
  void unknownJobsAndPreparationsAreNotFound() throws Exception {
    Recorder<JobApi.RunJobResponse> run = new Recorder<>();
    service.run(JobApi.RunJobRequest.newBuilder().setPreparationId("nope").build(), run);
    assertEquals(Status.Code.NOT_FOUND, run.status());
    Recorder<JobApi.JobStateEvent> state = new Recorder<>();
    service.getState(JobApi.GetJobStateRequest.newBuilder().setJobId("nope").build(), state);
    assertEquals(Status.Code.NOT_FOUND, state.status());
  }

  @Test
  void aPreparationRunsOnce() throws Exception {
    String preparation = prepare("one");
    run(preparation);
    Recorder<JobApi.RunJobResponse> again = new Recorder<>();
    service.run(JobApi.RunJobRequest.newBuilder().setPreparationId(preparation).build(), again);
    assertEquals(Status.Code.NOT_FOUND, again.status());
  }

  private String submit(String name) throws Exception {
    return run(prepare(name));
  }

  private String submit(String name, boolean endsWithClient) throws Exception {
    return run(prepare(name, options(name, endsWithClient)));
  }

  private String prepare(String name) throws Exception {
    return prepare(name, options(name));
  }

  private String prepare(String name, Struct options) throws Exception {
    Recorder<JobApi.PrepareJobResponse> prepared = new Recorder<>();
    service.prepare(
        JobApi.PrepareJobRequest.newBuilder()
            .setJobName(name)
            .setPipeline(RunnerApi.Pipeline.getDefaultInstance())
            .setPipelineOptions(options)
            .build(),
        prepared);
    return prepared.only().getPreparationId();
  }

  private String run(String preparation) throws Exception {
    Recorder<JobApi.RunJobResponse> run = new Recorder<>();
    service.run(JobApi.RunJobRequest.newBuilder().setPreparationId(preparation).build(), run);
    return run.only().getJobId();
  }

  private static Struct options(String name) {
    return Struct.newBuilder()
        .putFields(FlinkClusterJob.NAME_OPTION, Value.newBuilder().setStringValue(name).build())
        .build();
  }

  private static Struct options(String name, boolean endsWithClient) {
    return options(name).toBuilder()
        .putFields(
            InMemoryJobService.WITH_CLIENT_OPTION,
            Value.newBuilder().setBoolValue(endsWithClient).build())
        .build();
  }

  /** The names of the jobs cancelled on the cluster, less the suffix that made each unique. */
  private List<String> cancelledNames() {
    return engine.cancelledOnCluster.stream()
        .map(FlinkClusterJob::name)
        .map(name -> name.replaceFirst("-[0-9a-f]{12}$", ""))
        .collect(Collectors.toList());
  }

  private JobState.Enum state(String job) throws Exception {
    Recorder<JobApi.JobStateEvent> state = new Recorder<>();
    service.getState(JobApi.GetJobStateRequest.newBuilder().setJobId(job).build(), state);
    return state.only().getState();
  }

  private void awaitState(String job, JobState.Enum wanted) throws Exception {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    JobState.Enum now = state(job);
    while (now != wanted && System.nanoTime() < until) {
      Thread.sleep(10);
      now = state(job);
    }
    assertEquals(wanted, now);
  }

  /** Every state the job went through, as a client that asks late hears them. */
  private List<JobState.Enum> states(String job) throws Exception {
    Recorder<JobApi.JobStateEvent> stream = new Recorder<>();
    service.getStateStream(JobApi.GetJobStateRequest.newBuilder().setJobId(job).build(), stream);
    assertTrue(stream.done.await(WAIT_SECONDS, TimeUnit.SECONDS), "the job has not ended");
    return stream.values.stream().map(JobApi.JobStateEvent::getState).collect(Collectors.toList());
  }

  /** Stages nothing: every job's artifacts are those its pipeline names; records removals. */
  private static final class NoStaging extends ArtifactStagingService {
    final List<String> removed = new CopyOnWriteArrayList<>();

    NoStaging(Path dir) {
      super(ArtifactStagingService.beamFilesystemArtifactDestinationProvider(dir.toString()));
    }

    @Override
    public Map<String, List<RunnerApi.ArtifactInformation>> getStagedArtifacts(String token) {
      return Map.of();
    }

    @Override
    public void removeStagedArtifacts(String token) {
      removed.add(token);
    }
  }

  /** An engine whose jobs each get a {@link Runner}; records the options cancelled on a cluster. */
  private static final class Engine extends JobInvoker {
    final List<Runner> runners = new CopyOnWriteArrayList<>();
    final List<JobInvocation> invocations = new CopyOnWriteArrayList<>();
    final List<Struct> cancelledOnCluster = new CopyOnWriteArrayList<>();
    volatile Runnable onClusterCancel = () -> {};

    Engine() {
      super("test-job-%d");
    }

    Runner runner(int index) {
      return runners.get(index);
    }

    @Override
    protected JobInvocation invokeWithExecutor(
        RunnerApi.Pipeline pipeline,
        Struct options,
        String retrievalToken,
        ListeningExecutorService executorService) {
      Runner runner = new Runner();
      runners.add(runner);
      JobInfo info = JobInfo.create("job-" + runners.size(), "test", "", options);
      JobInvocation invocation =
          new JobInvocation(
              info,
              executorService,
              pipeline,
              runner,
              cancelled -> {
                cancelledOnCluster.add(cancelled);
                onClusterCancel.run();
              });
      invocations.add(invocation);
      return invocation;
    }
  }

  /** Runs until the test ends it ({@link #end}, {@link #fail}) or its thread is interrupted. */
  private static final class Runner implements PortablePipelineRunner {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch end = new CountDownLatch(1);
    final CountDownLatch interrupted = new CountDownLatch(1);
    private volatile RuntimeException failure;

    void fail(RuntimeException error) {
      failure = error;
      end.countDown();
    }

    @Override
    public PortablePipelineResult run(RunnerApi.Pipeline pipeline, JobInfo jobInfo)
        throws Exception {
      started.countDown();
      try {
        end.await();
      } catch (InterruptedException e) {
        interrupted.countDown();
        throw e;
      }
      if (failure != null) {
        throw failure;
      }
      return new Done();
    }
  }

  private static final class Done implements PortablePipelineResult {
    @Override
    public JobApi.MetricResults portableMetrics() {
      return JobApi.MetricResults.getDefaultInstance();
    }

    @Override
    public PipelineResult.State getState() {
      return PipelineResult.State.DONE;
    }

    @Override
    public PipelineResult.State cancel() {
      return PipelineResult.State.DONE;
    }

    @Override
    public PipelineResult.State waitUntilFinish(Duration duration) {
      return PipelineResult.State.DONE;
    }

    @Override
    public PipelineResult.State waitUntilFinish() {
      return PipelineResult.State.DONE;
    }

    @Override
    public MetricResults metrics() {
      throw new UnsupportedOperationException();
    }
  }

  /**
   * A server call whose client can hang up ({@link #hangUp}), as gRPC reports a client that went
   * away: it runs the call's cancel handler.
   */
  private static final class ClientCall<T> extends ServerCallStreamObserver<T> {
    private volatile Runnable onCancel = () -> {};
    private volatile boolean cancelled;

    void hangUp() {
      cancelled = true;
      onCancel.run();
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }

    @Override
    public void setOnCancelHandler(Runnable handler) {
      onCancel = handler;
    }

    @Override
    public void setCompression(String compression) {}

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setOnReadyHandler(Runnable handler) {}

    @Override
    public void disableAutoInboundFlowControl() {}

    @Override
    public void request(int count) {}

    @Override
    public void setMessageCompression(boolean enable) {}

    @Override
    public void onNext(T value) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }

  /** What one call answered: its values, and its error or completion. */
  private static final class Recorder<T> implements StreamObserver<T> {
    final List<T> values = new CopyOnWriteArrayList<>();
    final CountDownLatch done = new CountDownLatch(1);
    private volatile Throwable error;

    @Override
    public void onNext(T value) {
      values.add(value);
    }

    @Override
    public void onError(Throwable t) {
      error = t;
      done.countDown();
    }

    @Override
    public void onCompleted() {
      done.countDown();
    }

    T only() throws InterruptedException {
      assertTrue(done.await(WAIT_SECONDS, TimeUnit.SECONDS), "no answer");
      assertNull(error, () -> "failed: " + error);
      assertEquals(1, values.size());
      return values.get(0);
    }

    Status.Code status() throws InterruptedException {
      assertTrue(done.await(WAIT_SECONDS, TimeUnit.SECONDS), "no answer");
      assertFalse(error == null, "no error");
      return Status.fromThrowable(error).getCode();
    }
  }
}
