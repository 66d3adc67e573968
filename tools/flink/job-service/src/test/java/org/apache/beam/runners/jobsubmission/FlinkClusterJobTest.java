package org.apache.beam.runners.jobsubmission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Value;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Cancelling a job's counterpart through a stand-in for a Flink cluster's REST API. */
class FlinkClusterJobTest {
  private static final String OVERVIEW =
      "{\"jobs\":["
          + "{\"jid\":\"a1\",\"name\":\"corpusforge-x\",\"state\":\"RUNNING\",\"start-time\":3},"
          + "{\"jid\":\"a2\",\"name\":\"corpusforge-x\",\"state\":\"FINISHED\",\"start-time\":2},"
          + "{\"jid\":\"b1\",\"name\":\"someone-else\",\"state\":\"RUNNING\",\"start-time\":1},"
          + "{\"jid\":\"c1\",\"name\":\"corpusforge-x-1\",\"state\":\"RUNNING\",\"start-time\":4},"
          + "{\"jid\":\"c2\",\"name\":\"corpusforge\",\"state\":\"RUNNING\",\"start-time\":5}]}";

  private HttpServer server;
  private final List<String> patched = new CopyOnWriteArrayList<>();
  private volatile int overviewStatus = 200;

  @BeforeEach
  void startCluster() throws IOException {
    server = HttpServer.create(new InetSocketAddress("localhost", 0), 0);
    server.createContext(
        "/jobs",
        exchange -> {
          String path = exchange.getRequestURI().toString();
          byte[] body = new byte[0];
          int status = 404;
          if ("GET".equals(exchange.getRequestMethod()) && path.equals("/jobs/overview")) {
            status = overviewStatus;
            body = OVERVIEW.getBytes(StandardCharsets.UTF_8);
          } else if ("PATCH".equals(exchange.getRequestMethod())) {
            patched.add(path);
            status = 202;
          }
          exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
          if (body.length > 0) {
            exchange.getResponseBody().write(body);
          }
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stopCluster() {
    server.stop(0);
  }

  private String master() {
    return "localhost:" + server.getAddress().getPort();
  }

  private static Struct options(String master, String name) {
    Struct.Builder options = Struct.newBuilder();
    if (master != null) {
      options.putFields(FlinkClusterJob.MASTER_OPTION, string(master));
    }
    if (name != null) {
      options.putFields(FlinkClusterJob.NAME_OPTION, string(name));
    }
    return options.build();
  }

  private static Value string(String text) {
    return Value.newBuilder().setStringValue(text).build();
  }

  @Test
  void onlyTheJobsOfExactlyThatNameThatHaveNotEndedAreCancelled() throws Exception {
    assertEquals(List.of("a1"), FlinkClusterJob.cancel(master(), "corpusforge-x"));
    assertEquals(List.of("/jobs/a1?mode=cancel"), patched);
  }

  @Test
  void aJobIsNamedUniquelyAfterItsClientsName() {
    Struct given = options("h:8081", "mine");
    Struct once = FlinkClusterJob.uniquelyNamed(given, "ignored");
    Struct twice = FlinkClusterJob.uniquelyNamed(given, "ignored");
    assertTrue(FlinkClusterJob.name(once).matches("mine-[0-9a-f]{12}"), FlinkClusterJob.name(once));
    assertNotEquals(FlinkClusterJob.name(once), FlinkClusterJob.name(twice));
    assertEquals("h:8081", FlinkClusterJob.master(once), "the other options are kept");
    String unnamed = FlinkClusterJob.name(FlinkClusterJob.uniquelyNamed(options(null, null), ""));
    assertTrue(unnamed.matches("job-[0-9a-f]{12}"), unnamed);
    String fallback =
        FlinkClusterJob.name(FlinkClusterJob.uniquelyNamed(options(null, null), "prepared"));
    assertTrue(fallback.matches("prepared-[0-9a-f]{12}"), fallback);
  }

  @Test
  void aJobsOptionsNameItsCluster() {
    assertEquals("h:8081", FlinkClusterJob.master(options("h:8081", "n")));
    assertEquals("h:8081", FlinkClusterJob.master(options("http://h:8081", "n")));
    assertNull(FlinkClusterJob.master(options("[local]", "n")), "the embedded Flink");
    assertNull(FlinkClusterJob.master(options("[auto]", "n")));
    assertNull(FlinkClusterJob.master(options(null, "n")));
    assertNull(FlinkClusterJob.name(options("h:8081", null)));
  }

  @Test
  void cancelQuietlyGoesToTheClusterItsOptionsName() {
    FlinkClusterJob.cancelQuietly(options(master(), "corpusforge-x"));
    assertEquals(List.of("/jobs/a1?mode=cancel"), patched);
    FlinkClusterJob.cancelQuietly(options("[local]", "corpusforge-x"));
    assertEquals(1, patched.size());
  }

  @Test
  void aClusterThatRefusesIsAnErrorThatCancelQuietlyOnlyLogs() throws Exception {
    overviewStatus = 500;
    assertThrows(IOException.class, () -> FlinkClusterJob.cancel(master(), "corpusforge-x"));
    FlinkClusterJob.cancelQuietly(options(master(), "corpusforge-x"));
    int closed;
    try (ServerSocket socket = new ServerSocket(0)) {
      closed = socket.getLocalPort();
    }
    FlinkClusterJob.cancelQuietly(options("localhost:" + closed, "corpusforge-x"));
    assertEquals(List.of(), patched);
  }
}
