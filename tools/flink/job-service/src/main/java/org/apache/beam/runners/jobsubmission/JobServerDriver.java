package org.apache.beam.runners.jobsubmission;

import java.io.File;
import java.io.IOException;
import org.apache.beam.model.pipeline.v1.Endpoints;
import org.apache.beam.runners.fnexecution.artifact.ArtifactStagingService;
import org.apache.beam.sdk.fn.server.FnService;
import org.apache.beam.sdk.fn.server.GrpcFnServer;
import org.apache.beam.sdk.fn.server.ServerFactory;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.kohsuke.args4j.Option;
import org.kohsuke.args4j.spi.ExplicitBooleanOptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A job server process: the job API and the artifact staging API on their ports, jobs handed to
 * the engine's {@link JobInvoker}. An engine's driver (Flink's {@code FlinkJobServerDriver})
 * parses its {@link ServerConfiguration} and calls {@link #run()}, which serves until the
 * process is stopped.
 */
public abstract class JobServerDriver implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(JobServerDriver.class);

  /** Makes the engine's job invoker when the server starts. */
  @FunctionalInterface
  public interface JobInvokerFactory {
    JobInvoker create();
  }

  /** The command-line flags every job server takes ({@code --job-port=8099}). */
  public static class ServerConfiguration {
    @Option(name = "--job-host", usage = "The host the job and artifact services listen on")
    private String host = "localhost";

    @Option(name = "--job-port", usage = "The job service port (0: any free port)")
    private int port = 8099;

    @Option(name = "--artifact-port", usage = "The artifact staging port (0: any free port)")
    private int artifactPort = 8098;

    @Option(
        name = "--expansion-port",
        usage = "Accepted for compatibility; this job server serves no expansion service")
    private int expansionPort = 8097;

    @Option(name = "--artifacts-dir", usage = "Where staged artifacts are kept")
    private String stagingLocation =
        new File(System.getProperty("java.io.tmpdir"), "beam-artifact-staging").getPath();

    @Option(
        name = "--clean-artifacts-per-job",
        usage = "Remove a job's staged artifacts when it ends",
        handler = ExplicitBooleanOptionHandler.class)
    private boolean cleanArtifactsPerJob = true;

    public String getHost() {
      return host;
    }

    public int getPort() {
      return port;
    }

    public int getArtifactPort() {
      return artifactPort;
    }

    public int getExpansionPort() {
      return expansionPort;
    }

    public String getArtifactStagingPath() {
      return stagingLocation;
    }

    public boolean isCleanArtifactsPerJob() {
      return cleanArtifactsPerJob;
    }
  }

  protected final ServerConfiguration configuration;
  private final ServerFactory jobServerFactory;
  private final ServerFactory artifactServerFactory;
  private final JobInvokerFactory jobInvokerFactory;
  private @Nullable GrpcFnServer<InMemoryJobService> jobServer;
  private @Nullable GrpcFnServer<ArtifactStagingService> artifactServer;

  /** The server factory of the job service. */
  public static ServerFactory createJobServerFactory(ServerConfiguration configuration) {
    return ServerFactory.createDefault();
  }

  /** The server factory of the artifact staging service. */
  public static ServerFactory createArtifactServerFactory(ServerConfiguration configuration) {
    return ServerFactory.createDefault();
  }

  protected JobServerDriver(
      ServerConfiguration configuration,
      ServerFactory jobServerFactory,
      ServerFactory artifactServerFactory,
      JobInvokerFactory jobInvokerFactory) {
    this.configuration = configuration;
    this.jobServerFactory = jobServerFactory;
    this.artifactServerFactory = artifactServerFactory;
    this.jobInvokerFactory = jobInvokerFactory;
  }

  /** Start the services and serve until the process is stopped. */
  @Override
  public void run() {
    try {
      GrpcFnServer<InMemoryJobService> server = start();
      Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "job-server-shutdown"));
      ParentWatch.startIfAsked(this::endWithParent);
      server.getServer().awaitTermination();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      throw new RuntimeException("The job server failed", e);
    } finally {
      stop();
    }
  }

  /**
   * The process that started this job server has exited ({@link ParentWatch}): cancel every job
   * it runs, on the cluster too, and exit. No one is left to wait for them or to use what they
   * write.
   */
  private void endWithParent() {
    LOG.warn("Cancelling every job of this job server and exiting: its starter has exited");
    stop();
    System.exit(1);
  }

  /** Start the artifact staging and job services; returns the job service's server. */
  public synchronized GrpcFnServer<InMemoryJobService> start() throws IOException {
    if (jobServer != null) {
      return jobServer;
    }
    ArtifactStagingService staging =
        new ArtifactStagingService(
            ArtifactStagingService.beamFilesystemArtifactDestinationProvider(
                configuration.getArtifactStagingPath()));
    artifactServer = serve(staging, configuration.getArtifactPort(), artifactServerFactory);
    LOG.info("ArtifactStagingService started on {}", artifactServer.getApiServiceDescriptor().getUrl());
    InMemoryJobService jobService =
        InMemoryJobService.create(
            artifactServer.getApiServiceDescriptor(),
            staging,
            jobInvokerFactory.create(),
            configuration.isCleanArtifactsPerJob());
    jobServer = serve(jobService, configuration.getPort(), jobServerFactory);
    LOG.info("JobService started on {}", getJobServerUrl());
    return jobServer;
  }

  /** Where the job service listens ({@code localhost:8099}). */
  public synchronized String getJobServerUrl() {
    if (jobServer == null) {
      throw new IllegalStateException("the job server has not started");
    }
    return jobServer.getApiServiceDescriptor().getUrl();
  }

  /** Stop the services; jobs still running are cancelled. */
  public synchronized void stop() {
    if (jobServer != null) {
      close(jobServer, "job service");
      jobServer = null;
    }
    if (artifactServer != null) {
      close(artifactServer, "artifact staging service");
      artifactServer = null;
    }
  }

  private <S extends FnService> GrpcFnServer<S> serve(S service, int port, ServerFactory factory)
      throws IOException {
    if (port == 0) {
      return GrpcFnServer.allocatePortAndCreateFor(service, factory);
    }
    Endpoints.ApiServiceDescriptor where =
        Endpoints.ApiServiceDescriptor.newBuilder()
            .setUrl(configuration.getHost() + ":" + port)
            .build();
    return GrpcFnServer.create(service, where, factory);
  }

  private static void close(GrpcFnServer<?> server, String what) {
    try {
      server.close();
    } catch (Exception e) {
      LOG.warn("Could not stop the {}", what, e);
    }
  }
}
