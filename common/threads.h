/* threads.h - this process's threads and CPU time, for checks that workers were joined and sleep when idle.
 *
 * Part of xferlab's common library (Linux). Pure host code.
 */
#ifndef XL_THREADS_H
#define XL_THREADS_H

#ifdef __cplusplus
extern "C" {
#endif

/* xl_threads_now - how many threads this process has now (the entries of /proc/self/task); -1 when unreadable */
int xl_threads_now(void);

/* xl_tid - the calling thread's id (gettid) */
long xl_tid(void);

/* xl_cpu_ms_now - the CPU time this process has used so far, all threads, user and system, in ms (getrusage) */
double xl_cpu_ms_now(void);

/* xl_fault_threads - on 1, pthread_create in the program's own objects (passed through the kit with --wrap) asks
 * xl_fault_due (common/faults.h) first and fails with EAGAIN when due, so that a create that starts threads reaches
 * "the third worker did not start"; 0 (the default) leaves every pthread_create alone. Only lab 10's grader turns
 * it on, after its warm-up (the CUDA runtime starts threads of its own the first time it needs them). */
void xl_fault_threads(int on);

/* xl_threads_started, xl_threads_joined - the threads pthread_create started, and the pthread_join (or
 * pthread_detach) calls that succeeded, in the program's own objects (passed through the kit with --wrap) since the
 * process began: a destroy that returns with a worker it never joined, still running, is seen at once, where the
 * thread count only falls once that thread has ended */
long xl_threads_started(void);
long xl_threads_joined(void);

#ifdef __cplusplus
}
#endif

#endif
