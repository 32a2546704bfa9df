package import NIOCore

/// Runs a task's jobs on one event loop's thread, so that answering a request never leaves the loop
/// that read it.
///
/// The engine's `respond(to:)` is `async`, but with the memory store (and SQLite reads, served from its
/// mirror) it never suspends: started on the cooperative pool, every request crossed to another thread
/// and back (two wake-ups, two queues). Started with this executor as its preference, the task runs on
/// the loop's own thread, after the read that queued it; a task that does suspend (an SQLite write,
/// simulated latency) resumes here too.
package final class EventLoopTaskExecutor: TaskExecutor {
    package let eventLoop: any EventLoop

    package init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
