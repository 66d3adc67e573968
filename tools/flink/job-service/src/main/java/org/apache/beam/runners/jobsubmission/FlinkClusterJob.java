package org.apache.beam.runners.jobsubmission;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Value;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Beam job's counterpart on a Flink cluster, reached through the cluster's REST API. Beam's
 * Flink runner submits to a cluster and waits for the job in an attached client; cancelling the
 * invocation interrupts that wait but leaves the cluster's job RUNNING. The cluster's job
 * carries the Beam job's name ({@code --job_name}), by which it is found and cancelled here.
 * That name is made unique when the job is prepared ({@link #uniquelyNamed}: the client's name,
 * a dash and a random suffix), so a cancel stops this job and never another client's job that
 * was given the same {@code --job_name}; the build's own watchdog finds it by the client's
 * name and that dash.
 */
final class FlinkClusterJob {
  private static final Logger LOG = LoggerFactory.getLogger(FlinkClusterJob.class);
  static final String MASTER_OPTION = "beam:option:flink_master:v1";
  static final String NAME_OPTION = "beam:option:job_name:v1";
  private static final Set<String> ENDED = Set.of("FINISHED", "FAILED", "CANCELED", "SUSPENDED");
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private FlinkClusterJob() {}

  /**
   * The REST address ({@code host:port}) of the cluster a job's options name, or {@code null}
   * when they name none (the embedded Flink {@code [local]}, {@code [auto]}, nothing).
   */
  static @Nullable String master(Struct options) {
    String master = option(options, MASTER_OPTION);
    if (master == null) {
      return null;
    }
    master = master.replaceFirst("^https?://", "");
    return master.contains(":") && !master.startsWith("[") ? master : null;
  }

  /**
   * {@code options} with a job name no other job has: the name they carry (else {@code
   * fallback}, the name the client prepared the job under), a dash and 12 random hex digits.
   *
   * @param options the pipeline options a client sent
   * @param fallback the name to start from when the options carry none
   */
  static Struct uniquelyNamed(Struct options, String fallback) {
    String name = name(options);
    String prefix = name != null ? name : fallback.isEmpty() ? "job" : fallback;
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    Value unique = Value.newBuilder().setStringValue(prefix + "-" + suffix).build();
    return options.toBuilder().putFields(NAME_OPTION, unique).build();
  }

  /** The job's name in its options, or {@code null}. */
  static @Nullable String name(Struct options) {
    return option(options, NAME_OPTION);
  }

  /**
   * Cancel the job a Beam job's options name on their cluster, if they name one; never throws
   * (the job server is going away or the user cancelled: a cluster that does not answer is
   * logged).
   */
  static void cancelQuietly(Struct options) {
    String master = master(options);
    String name = name(options);
    if (master == null || name == null) {
      return;
    }
    try {
      List<String> cancelled = cancel(master, name);
      LOG.info("Cancelled {} on the Flink cluster at {}: {}", name, master, cancelled);
    } catch (IOException e) {
      LOG.warn("Could not cancel {} on the Flink cluster at {}", name, master, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.warn("Interrupted while cancelling {} on the Flink cluster at {}", name, master);
    }
  }

  /**
   * Cancel every job called exactly {@code name} on the cluster at {@code master} that has not
   * ended: this job alone, its name being unique ({@link #uniquelyNamed}).
   *
   * @return the ids of the jobs asked to cancel
   * @throws IOException the cluster did not answer, or refused
   */
  static List<String> cancel(String master, String name) throws IOException, InterruptedException {
    HttpClient client = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    JsonNode jobs = new ObjectMapper().readTree(send(client, master, "GET", "/jobs/overview"));
    List<String> cancelled = new ArrayList<>();
    for (JsonNode job : jobs.path("jobs")) {
      if (name.equals(job.path("name").asText()) && !ENDED.contains(job.path("state").asText())) {
        String id = job.path("jid").asText();
        send(client, master, "PATCH", "/jobs/" + id + "?mode=cancel");
        cancelled.add(id);
      }
    }
    return cancelled;
  }

  private static String send(HttpClient client, String master, String method, String path)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://" + master + path))
            .timeout(TIMEOUT)
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    HttpResponse<String> response = client.send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() / 100 != 2) {
      throw new IOException(method + " " + path + " answered " + response.statusCode());
    }
    return response.body();
  }

  private static @Nullable String option(Struct options, String key) {
    Value value = options.getFieldsMap().get(key);
    if (value == null || value.getKindCase() != Value.KindCase.STRING_VALUE) {
      return null;
    }
    String text = value.getStringValue();
    return text.isEmpty() ? null : text;
  }
}
