package org.apache.beam.runners.jobsubmission;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.function.Consumer;
import org.apache.beam.model.jobmanagement.v1.JobApi;
import org.apache.beam.model.jobmanagement.v1.JobApi.JobMessage;
import org.apache.beam.model.jobmanagement.v1.JobApi.JobState;
import org.apache.beam.model.jobmanagement.v1.JobApi.JobStateEvent;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.runners.fnexecution.provisioning.JobInfo;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Timestamp;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.FutureCallback;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.Futures;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListenableFuture;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.ListeningExecutorService;
import org.apache.beam.vendor.guava.v32_1_2_jre.com.google.common.util.concurrent.MoreExecutors;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One job: its pipeline run by a {@link PortablePipelineRunner} on the invoker's threads, its
 * state changes and messages kept and sent to every listener (a listener added late first gets
 * what it missed, so a client never waits for an event that came before it asked).
 */
public class JobInvocation {
  private static final Logger LOG = LoggerFactory.getLogger(JobInvocation.class);

  private final JobInfo jobInfo;
  private final ListeningExecutorService executorService;
  private final RunnerApi.Pipeline pipeline;
  private final PortablePipelineRunner runner;
  private final Consumer<Struct> cancelOnCluster;

  private final List<JobStateEvent> stateHistory = new ArrayList<>();
  private final List<JobMessage> messageHistory = new ArrayList<>();
  private final List<Consumer<JobStateEvent>> stateListeners = new ArrayList<>();
  private final List<Consumer<JobMessage>> messageListeners = new ArrayList<>();
  private JobState.Enum state = JobState.Enum.STOPPED;
  private @Nullable ListenableFuture<PortablePipelineResult> run;
  private @Nullable PortablePipelineResult result;

  /**
   * @param jobInfo the job's id, name, retrieval token and options
   * @param executorService where the runner runs
   * @param pipeline the pipeline, its artifacts staged
   * @param runner the engine's runner
   */
  public JobInvocation(
      JobInfo jobInfo,
      ListeningExecutorService executorService,
      RunnerApi.Pipeline pipeline,
      PortablePipelineRunner runner) {
    this(jobInfo, executorService, pipeline, runner, FlinkClusterJob::cancelQuietly);
  }

  /**
   * As above, with {@code cancelOnCluster} given the job's options when a running job is
   * cancelled (tests give their own).
   */
  JobInvocation(
      JobInfo jobInfo,
      ListeningExecutorService executorService,
      RunnerApi.Pipeline pipeline,
      PortablePipelineRunner runner,
      Consumer<Struct> cancelOnCluster) {
    this.jobInfo = jobInfo;
    this.executorService = executorService;
    this.pipeline = pipeline;
    this.runner = runner;
    this.cancelOnCluster = cancelOnCluster;
  }

  /** Start the job on the invoker's threads; it may be started once. */
  public synchronized void start() {
    if (run != null) {
      throw new IllegalStateException("job " + getId() + " was already started");
    }
    LOG.info("Starting job invocation {}", getId());
    setState(JobState.Enum.STARTING);
    run =
        executorService.submit(
            () -> {
              setState(JobState.Enum.RUNNING);
              return runner.run(pipeline, jobInfo);
            });
    Futures.addCallback(run, new Outcome(), MoreExecutors.directExecutor());
  }

  /**
   * Cancel the job if it has not ended; its state becomes {@code CANCELLED}. A job that runs on
   * a Flink cluster is cancelled there too ({@link FlinkClusterJob}): the runner's thread,
   * interrupted, stops waiting for it but would leave it running.
   */
  public void cancel() {
    boolean running;
    synchronized (this) {
      if (isTerminal(state)) {
        return;
      }
      LOG.info("Cancelling job invocation {}", getId());
      setState(JobState.Enum.CANCELLING);
      running = run != null && result == null;
    }
    if (running) { // outside the lock: the cluster may take seconds to answer
      cancelOnCluster.accept(jobInfo.pipelineOptions());
    }
    stopRunner();
  }

  private synchronized void stopRunner() {
    if (isTerminal(state)) {
      return;
    }
    if (result != null) {
      try {
        result.cancel();
      } catch (Exception e) {
        LOG.warn("The runner could not cancel job {}", getId(), e);
      }
    }
    if (run != null) {
      run.cancel(true);
    } else {
      setState(JobState.Enum.CANCELLED);
    }
  }

  /** The job's id (the id of its {@link JobInfo}). */
  public String getId() {
    return jobInfo.jobId();
  }

  /** The pipeline this job runs. */
  public RunnerApi.Pipeline getPipeline() {
    return pipeline;
  }

  /** The job's current state. */
  public synchronized JobState.Enum getState() {
    return state;
  }

  /** The job's current state as an event. */
  public synchronized JobStateEvent getStateEvent() {
    return stateHistory.isEmpty() ? event(state) : stateHistory.get(stateHistory.size() - 1);
  }

  /** The job's metrics once it has ended; empty before, or when the runner keeps none. */
  public synchronized JobApi.MetricResults getMetrics() {
    if (result == null) {
      return JobApi.MetricResults.getDefaultInstance();
    }
    try {
      return result.portableMetrics();
    } catch (UnsupportedOperationException e) {
      return JobApi.MetricResults.getDefaultInstance();
    }
  }

  /** The job as the job API lists it. */
  public synchronized JobApi.JobInfo toProto() {
    return JobApi.JobInfo.newBuilder()
        .setJobId(jobInfo.jobId())
        .setJobName(jobInfo.jobName())
        .setPipelineOptions(jobInfo.pipelineOptions())
        .setState(state)
        .build();
  }

  /** Send {@code listener} every state change: those so far, then each new one. */
  public synchronized void addStateListener(Consumer<JobStateEvent> listener) {
    stateHistory.forEach(listener);
    stateListeners.add(listener);
  }

  /** Send {@code listener} every message: those so far, then each new one. */
  public synchronized void addMessageListener(Consumer<JobMessage> listener) {
    messageHistory.forEach(listener);
    messageListeners.add(listener);
  }

  /** Stop sending events to {@code listener} (its client went away). */
  public synchronized void removeListener(Object listener) {
    stateListeners.remove(listener);
    messageListeners.remove(listener);
  }

  /** Whether {@code state} is one a job never leaves. */
  public static boolean isTerminal(JobState.Enum state) {
    switch (state) {
      case DONE:
      case FAILED:
      case CANCELLED:
      case UPDATED:
      case DRAINED:
        return true;
      default:
        return false;
    }
  }

  private synchronized void setState(JobState.Enum newState) {
    if (isTerminal(state) || newState == state) {
      return;
    }
    state = newState;
    JobStateEvent event = event(newState);
    stateHistory.add(event);
    for (Consumer<JobStateEvent> listener : new ArrayList<>(stateListeners)) {
      listener.accept(event);
    }
  }

  private synchronized void addMessage(JobMessage.MessageImportance importance, String text) {
    JobMessage message =
        JobMessage.newBuilder()
            .setMessageId(Integer.toString(messageHistory.size()))
            .setTime(Long.toString(System.currentTimeMillis()))
            .setImportance(importance)
            .setMessageText(text)
            .build();
    messageHistory.add(message);
    for (Consumer<JobMessage> listener : new ArrayList<>(messageListeners)) {
      listener.accept(message);
    }
  }

  private static JobStateEvent event(JobState.Enum state) {
    long now = System.currentTimeMillis();
    return JobStateEvent.newBuilder()
        .setState(state)
        .setTimestamp(
            Timestamp.newBuilder().setSeconds(now / 1000).setNanos((int) (now % 1000) * 1_000_000))
        .build();
  }

  private static JobState.Enum stateOf(PipelineResult.State engineState) {
    switch (engineState) {
      case FAILED:
        return JobState.Enum.FAILED;
      case CANCELLED:
        return JobState.Enum.CANCELLED;
      case STOPPED:
        return JobState.Enum.STOPPED;
      case UPDATED:
        return JobState.Enum.UPDATED;
      case RUNNING:
        return JobState.Enum.RUNNING;
      default: // DONE, and UNKNOWN for a job handed over detached: nothing more to wait for here
        return JobState.Enum.DONE;
    }
  }

  /** What the runner's run came to: the job's final state, and on failure the error's text. */
  private final class Outcome implements FutureCallback<PortablePipelineResult> {
    @Override
    public void onSuccess(PortablePipelineResult pipelineResult) {
      synchronized (JobInvocation.this) {
        result = pipelineResult;
        JobState.Enum ended = stateOf(pipelineResult.getState());
        LOG.info("Job {} finished with state {}", getId(), ended);
        setState(ended);
      }
    }

    @Override
    public void onFailure(Throwable error) {
      synchronized (JobInvocation.this) {
        if (error instanceof CancellationException || state == JobState.Enum.CANCELLING) {
          LOG.info("Job {} was cancelled", getId());
          setState(JobState.Enum.CANCELLED);
          return;
        }
        LOG.error("Job {} failed", getId(), error);
        StringWriter trace = new StringWriter();
        error.printStackTrace(new PrintWriter(trace));
        addMessage(JobMessage.MessageImportance.JOB_MESSAGE_ERROR, trace.toString());
        setState(JobState.Enum.FAILED);
      }
    }
  }
}
