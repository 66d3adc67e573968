package org.apache.beam.runners.jobsubmission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import org.apache.beam.model.pipeline.v1.RunnerApi;
import org.apache.beam.vendor.grpc.v1p69p0.com.google.protobuf.Struct;
import org.junit.jupiter.api.Test;

/** A pipeline packed as Beam's Python SDK packs one (src/test/resources/BEAM-PIPELINE). */
class PortablePipelineJarUtilsTest {
  @Test
  void theManifestNamesTheDefaultJob() throws IOException {
    assertEquals("packed", PortablePipelineJarUtils.getDefaultJobName());
  }

  @Test
  void aPackedJobsPipelineAndOptionsAreRead() throws IOException {
    RunnerApi.Pipeline pipeline = PortablePipelineJarUtils.getPipelineFromClasspath("packed");
    assertEquals(List.of("ref_Impulse"), pipeline.getRootTransformIdsList());
    assertEquals("Impulse", pipeline.getComponents().getTransformsOrThrow("ref_Impulse").getUniqueName());
    Struct options = PortablePipelineJarUtils.getPipelineOptionsFromClasspath("packed");
    assertEquals(
        "corpusforge-packed",
        options.getFieldsOrThrow("beam:option:job_name:v1").getStringValue());
  }

  @Test
  void aJobThatIsNotPackedIsAnError() {
    IOException error =
        assertThrows(
            IOException.class, () -> PortablePipelineJarUtils.getPipelineFromClasspath("other"));
    assertTrue(error.getMessage().contains("BEAM-PIPELINE/other/pipeline.json"), error.getMessage());
  }
}
