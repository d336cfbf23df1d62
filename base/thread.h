/* thread.h - the few threading primitives the portable core needs.
 * Implemented by thread_posix.c (native) and thread_win.c (Windows); the
 * build picks one. */
#ifndef CP_THREAD_H
#define CP_THREAD_H

#include <stdint.h>

typedef struct cp_mutex cp_mutex;
typedef struct cp_cond cp_cond;
typedef struct cp_thread cp_thread;

cp_mutex *cp_mutex_new(void); /* NULL on failure */
void cp_mutex_free(cp_mutex *m);
void cp_mutex_lock(cp_mutex *m);
void cp_mutex_unlock(cp_mutex *m);

cp_cond *cp_cond_new(void);
void cp_cond_free(cp_cond *c);
void cp_cond_wait(cp_cond *c, cp_mutex *m);
/* Returns 0 when signalled (or spuriously), 1 on timeout. */
int cp_cond_timedwait(cp_cond *c, cp_mutex *m, int64_t timeout_ms);
void cp_cond_signal(cp_cond *c);
void cp_cond_broadcast(cp_cond *c);

/* Starts fn(arg) on a new thread; NULL on failure. */
cp_thread *cp_thread_start(void (*fn)(void *), void *arg);
/* Waits for the thread to end and frees it. */
void cp_thread_join(cp_thread *t);

/* Monotonic milliseconds. */
int64_t cp_now_ms(void);
/* Monotonic microseconds (call durations for the metrics). */
int64_t cp_now_us(void);

#endif
