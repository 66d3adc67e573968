package org.apache.beam.runners.jobsubmission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ParentWatchTest {
  private static final Duration EVERY = Duration.ofMillis(10);

  @Test
  void runsOnceWhenTheParentChanges() throws Exception {
    AtomicLong parent = new AtomicLong(4242);
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch ran = new CountDownLatch(1);
    try (ParentWatch watch =
        ParentWatch.start(
            parent::get,
            EVERY,
            () -> {
              runs.incrementAndGet();
              ran.countDown();
            })) {
      assertEquals(4242, watch.watched());
      Thread.sleep(100); // ten looks at an unchanged parent
      assertEquals(0, runs.get());
      parent.set(1); // handed to init: the parent exited
      assertTrue(ran.await(5, TimeUnit.SECONDS));
      parent.set(4242);
      Thread.sleep(100);
      assertEquals(1, runs.get());
    }
  }

  @Test
  void aParentThatIsGoneCountsAsExited() throws Exception {
    AtomicLong parent = new AtomicLong(4242);
    CountDownLatch ran = new CountDownLatch(1);
    try (ParentWatch watch = ParentWatch.start(parent::get, EVERY, ran::countDown)) {
      parent.set(-1);
      assertTrue(ran.await(5, TimeUnit.SECONDS));
    }
  }

  @Test
  void aClosedWatchNeverRuns() throws Exception {
    AtomicLong parent = new AtomicLong(4242);
    AtomicInteger runs = new AtomicInteger();
    ParentWatch watch = ParentWatch.start(parent::get, EVERY, runs::incrementAndGet);
    watch.close();
    parent.set(1);
    Thread.sleep(100);
    assertEquals(0, runs.get());
  }

  @Test
  void onlyWhenAskedByTheSystemProperty() {
    System.clearProperty(ParentWatch.PROPERTY);
    assertNull(ParentWatch.startIfAsked(() -> {}), "a job server started by hand must not watch");
    System.setProperty(ParentWatch.PROPERTY, "true");
    try (ParentWatch watch = ParentWatch.startIfAsked(() -> {})) {
      assertNotNull(watch);
      assertEquals(ProcessHandle.current().parent().orElseThrow().pid(), watch.watched());
    } finally {
      System.clearProperty(ParentWatch.PROPERTY);
    }
  }
}
