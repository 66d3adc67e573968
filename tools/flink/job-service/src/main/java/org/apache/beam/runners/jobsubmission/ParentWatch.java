package org.apache.beam.runners.jobsubmission;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.checkerframework.checker.nullness.qual.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a job server with the process that started it. A build that starts the job server itself
 * (corpusforge's {@code --runner flink}, through Beam's subprocess server) asks for this with the
 * system property {@value #PROPERTY}{@code =true}: were the build killed (SIGKILL, the OOM
 * killer), its job would otherwise run on the cluster with no one waiting for it. A job server
 * a user starts by hand for {@code --job_endpoint} has no such property and outlives its shell.
 *
 * <p>The watch reads this process's parent pid every {@link #EVERY}: when the parent exits the
 * kernel hands this process to another (init or a subreaper), so the pid changes even while the
 * dead parent is a zombie no one has reaped yet.
 */
public final class ParentWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ParentWatch.class);

  /** The system property that turns the watch on ({@code -D...=true}). */
  public static final String PROPERTY = "corpusforge.job-server.exit-with-parent";

  /** How often the parent is looked at. */
  public static final Duration EVERY = Duration.ofMillis(500);

  private final LongSupplier parentPid;
  private final long watched;
  private final Runnable onExit;
  private final Thread thread;
  private volatile boolean closed;

  private ParentWatch(LongSupplier parentPid, Duration every, Runnable onExit) {
    this.parentPid = parentPid;
    this.watched = parentPid.getAsLong();
    this.onExit = onExit;
    this.thread = new Thread(() -> watch(every.toMillis()), "parent-watch");
    this.thread.setDaemon(true);
  }

  /**
   * Watch this process's parent when {@value #PROPERTY} is {@code true}; else nothing.
   *
   * @param onExit what to do once the parent has exited (cancel the jobs, exit)
   * @return the running watch, or {@code null} when it was not asked for or there is no parent
   *     to watch (started by init)
   */
  public static @Nullable ParentWatch startIfAsked(Runnable onExit) {
    if (!Boolean.getBoolean(PROPERTY)) {
      return null;
    }
    long parent = currentParent();
    if (parent <= 1) {
      LOG.warn("{} is set but this process has no parent to watch (pid {})", PROPERTY, parent);
      return null;
    }
    LOG.info("Watching the process that started this job server (pid {})", parent);
    return start(ParentWatch::currentParent, EVERY, onExit);
  }

  /**
   * Run {@code onExit} once, on the watch's thread, when {@code parentPid} answers other than
   * it did now.
   *
   * @param parentPid the parent's pid as it is now, or -1 when there is none
   * @param every how often to ask
   * @param onExit what to do once it has changed
   */
  static ParentWatch start(LongSupplier parentPid, Duration every, Runnable onExit) {
    ParentWatch watch = new ParentWatch(parentPid, every, onExit);
    watch.thread.start();
    return watch;
  }

  /** This process's parent's pid, or -1 when it has none. */
  static long currentParent() {
    return ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
  }

  /** The pid being watched. */
  public long watched() {
    return watched;
  }

  /** Stop watching ({@code onExit}, if already under way, finishes). */
  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }

  private void watch(long everyMillis) {
    try {
      while (!closed) {
        Thread.sleep(everyMillis);
        if (!closed && parentPid.getAsLong() != watched) {
          LOG.warn("The process that started this job server (pid {}) has exited", watched);
          onExit.run();
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
