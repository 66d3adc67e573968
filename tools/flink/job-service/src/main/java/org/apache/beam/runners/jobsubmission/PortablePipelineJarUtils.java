package org.apache.beam.runners.jobsubmission;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Message;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.util.JsonFormat;

/**
 * Reads a pipeline packed into a jar, as Beam's Python SDK packs one for Flink
 * ({@code --flink_submit_uber_jar}): {@code BEAM-PIPELINE/pipeline-manifest.json} names the
 * default job, and {@code BEAM-PIPELINE/<job>/pipeline.json} and {@code pipeline-options.json}
 * hold its pipeline and options as protobuf JSON.
 */
public abstract class PortablePipelineJarUtils {
  static final String PIPELINE_FOLDER = "BEAM-PIPELINE";
  static final String PIPELINE_MANIFEST = PIPELINE_FOLDER + "/pipeline-manifest.json";

  private PortablePipelineJarUtils() {}

  /** The pipeline of job {@code jobName} in the jars on the class path. */
  public static RunnerApi.Pipeline getPipelineFromClasspath(String jobName) throws IOException {
    RunnerApi.Pipeline.Builder pipeline = RunnerApi.Pipeline.newBuilder();
    parse(PIPELINE_FOLDER + "/" + jobName + "/pipeline.json", pipeline);
    return pipeline.build();
  }

  /** The pipeline options of job {@code jobName} in the jars on the class path. */
  public static Struct getPipelineOptionsFromClasspath(String jobName) throws IOException {
    Struct.Builder options = Struct.newBuilder();
    parse(PIPELINE_FOLDER + "/" + jobName + "/pipeline-options.json", options);
    return options.build();
  }

  /** The job the manifest names as the default ({@code defaultJobName}). */
  public static String getDefaultJobName() throws IOException {
    Struct.Builder manifest = Struct.newBuilder();
    parse(PIPELINE_MANIFEST, manifest);
    String name = manifest.getFieldsOrDefault("defaultJobName", null) == null
        ? ""
        : manifest.getFieldsOrThrow("defaultJobName").getStringValue();
    if (name.isEmpty()) {
      throw new IOException(PIPELINE_MANIFEST + " names no defaultJobName");
    }
    return name;
  }

  private static void parse(String resource, Message.Builder into) throws IOException {
    ClassLoader loader = PortablePipelineJarUtils.class.getClassLoader();
    try (InputStream in = loader.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IOException("no " + resource + " on the class path");
      }
      JsonFormat.parser().ignoringUnknownFields().merge(
          new String(in.readAllBytes(), StandardCharsets.UTF_8), into);
    }
  }
}
